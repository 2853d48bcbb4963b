#include "server/store/pool_counters.h"

#include <rocksdb/merge_operator.h>

namespace dictlog::store {
namespace {

void PutFixed64LE(uint64_t value, std::string* out) {
  for (int i = 0; i < 8; ++i) out->push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

uint64_t GetFixed64LE(const char* p) {
  uint64_t value = 0;
  for (int i = 7; i >= 0; --i) value = (value << 8) | static_cast<unsigned char>(p[i]);
  return value;
}

class PoolCountersMergeOperator : public rocksdb::AssociativeMergeOperator {
 public:
  bool Merge(const rocksdb::Slice& /*key*/, const rocksdb::Slice* existing,
             const rocksdb::Slice& value, std::string* new_value,
             rocksdb::Logger* /*logger*/) const override {
    PoolCounters sum, delta;
    if (existing != nullptr &&
        !DecodePoolCounters(absl::string_view(existing->data(), existing->size()), &sum)) {
      return false;  // Reported by RocksDB as a corruption.
    }
    if (!DecodePoolCounters(absl::string_view(value.data(), value.size()), &delta)) {
      return false;
    }
    sum += delta;
    *new_value = EncodePoolCounters(sum);
    return true;
  }
  const char* Name() const override { return "dictlog.PoolCounters"; }
};

}  // namespace

std::string EncodePoolCounters(const PoolCounters& counters) {
  std::string out;
  out.reserve(kPoolCountersBytes);
  PutFixed64LE(counters.records, &out);
  PutFixed64LE(counters.raw_bytes, &out);
  PutFixed64LE(counters.stored_bytes, &out);
  return out;
}

bool DecodePoolCounters(absl::string_view value, PoolCounters* counters) {
  if (value.size() != kPoolCountersBytes) return false;
  counters->records = GetFixed64LE(value.data());
  counters->raw_bytes = GetFixed64LE(value.data() + 8);
  counters->stored_bytes = GetFixed64LE(value.data() + 16);
  return true;
}

std::shared_ptr<rocksdb::MergeOperator> NewPoolCountersMergeOperator() {
  return std::make_shared<PoolCountersMergeOperator>();
}

}  // namespace dictlog::store
