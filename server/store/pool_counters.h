// PoolCounters: a record count, raw bytes and stored bytes (of a pool, or of the
// records that name one dictionary), kept in the counters column family and updated
// by RocksDB merges (each write merges its deltas in the same atomic batch as its
// records), so concurrent writers never overwrite each other's counts. Value
// encoding: three u64 little-endian fields. Deltas may be negative: addition wraps
// modulo 2^64, so adding the two's complement subtracts.
#ifndef DICTLOG_SERVER_STORE_POOL_COUNTERS_H_
#define DICTLOG_SERVER_STORE_POOL_COUNTERS_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/strings/string_view.h"

namespace rocksdb {
class MergeOperator;
}

namespace dictlog::store {

struct PoolCounters {
  uint64_t records = 0;
  uint64_t raw_bytes = 0;
  uint64_t stored_bytes = 0;

  PoolCounters& operator-=(const PoolCounters& other) {
    records -= other.records;
    raw_bytes -= other.raw_bytes;
    stored_bytes -= other.stored_bytes;
    return *this;
  }
  PoolCounters& operator+=(const PoolCounters& other) {
    records += other.records;
    raw_bytes += other.raw_bytes;
    stored_bytes += other.stored_bytes;
    return *this;
  }
  bool operator==(const PoolCounters& o) const {
    return records == o.records && raw_bytes == o.raw_bytes &&
           stored_bytes == o.stored_bytes;
  }
};

inline constexpr size_t kPoolCountersBytes = 24;

std::string EncodePoolCounters(const PoolCounters& counters);
// False if `value` is not kPoolCountersBytes long.
bool DecodePoolCounters(absl::string_view value, PoolCounters* counters);

// The merge operator of the counters column family: adds counters field by field.
std::shared_ptr<rocksdb::MergeOperator> NewPoolCountersMergeOperator();

}  // namespace dictlog::store

#endif  // DICTLOG_SERVER_STORE_POOL_COUNTERS_H_
