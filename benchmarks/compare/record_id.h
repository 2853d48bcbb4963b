// Record ids and RocksDB keys of the comparison server (compare_server). Ids are
// dictlog's own, parsed and formatted by the server's rules (server/pool/names.h:
// "<category>/<seq>", seq decimal >= 1 without leading zeros), so the comparison
// servers reject exactly what dictlogd rejects and dictlog-bench and the dictlog CLI
// use them unchanged; the category plays the pool's part. Pure functions; safe from
// any thread.
#ifndef DICTLOG_BENCHMARKS_COMPARE_RECORD_ID_H_
#define DICTLOG_BENCHMARKS_COMPARE_RECORD_ID_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "server/pool/names.h"

namespace dictlog::compare {

// `RecordId::pool` is the record's category here.
using pool::FormatRecordId;
using pool::ParseRecordId;
using pool::RecordId;

// INVALID_ARGUMENT unless `category` follows dictlogd's name rules.
inline absl::Status ValidateCategory(absl::string_view category) {
  return pool::ValidateName(category, "category");
}

// The RocksDB key: category, a 0 byte, seq as 8 bytes big-endian (so a category's
// records sort in append order).
std::string RecordKey(absl::string_view category, uint64_t seq);

}  // namespace dictlog::compare

#endif  // DICTLOG_BENCHMARKS_COMPARE_RECORD_ID_H_
