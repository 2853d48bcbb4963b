// Record ids and RocksDB keys of the comparison server (compare_server): ids have
// dictlog's shape "<category>/<seq>" (seq counts from 1 per category), so dictlog-bench
// and the dictlog CLI use them unchanged. Pure functions; safe from any thread.
#ifndef DICTLOG_BENCHMARKS_COMPARE_RECORD_ID_H_
#define DICTLOG_BENCHMARKS_COMPARE_RECORD_ID_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace dictlog::compare {

struct RecordId {
  std::string category;
  uint64_t seq = 0;
};

// INVALID_ARGUMENT unless `category` is 1 to 128 bytes of printable ASCII (0x21..0x7e),
// the rule dictlogd applies.
absl::Status ValidateCategory(absl::string_view category);

// "<category>/<seq>".
std::string FormatRecordId(absl::string_view category, uint64_t seq);

// The inverse of FormatRecordId: splits at the last '/'. INVALID_ARGUMENT if there is
// none, the category is not valid, or seq is not a decimal number >= 1.
absl::StatusOr<RecordId> ParseRecordId(absl::string_view id);

// The RocksDB key: category, a 0 byte, seq as 8 bytes big-endian (so a category's
// records sort in append order).
std::string RecordKey(absl::string_view category, uint64_t seq);

}  // namespace dictlog::compare

#endif  // DICTLOG_BENCHMARKS_COMPARE_RECORD_ID_H_
