// The one conversion of RocksDB statuses into absl statuses, for every RocksDB user
// (server/store, and the comparison server's RocksDB backend in benchmarks/compare).
// Stateless; safe from any thread.
#ifndef DICTLOG_SERVER_STORE_ROCKSDB_STATUS_H_
#define DICTLOG_SERVER_STORE_ROCKSDB_STATUS_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace rocksdb {
class Status;
}  // namespace rocksdb

namespace dictlog::store {

// OK for OK; otherwise "<what>: <RocksDB's message>" with the most specific code:
// NotFound -> NOT_FOUND, Corruption -> DATA_LOSS, NoSpace/MemoryLimit ->
// RESOURCE_EXHAUSTED, Busy/TryAgain/TimedOut/IOError -> UNAVAILABLE, InvalidArgument ->
// INVALID_ARGUMENT, anything else -> INTERNAL.
absl::Status FromRocks(const rocksdb::Status& status, absl::string_view what);

}  // namespace dictlog::store

#endif  // DICTLOG_SERVER_STORE_ROCKSDB_STATUS_H_
