// Category names, pool names and record ids.
//
//   category, pool name := 1..128 bytes of printable ASCII (0x21..0x7e)
//   record id           := pool_name "/" seq      seq: decimal, no leading zeros, >= 1
//
// A pool name may itself contain '/': an id splits at its last '/'. Stateless and
// thread-safe.
#ifndef DICTLOG_SERVER_POOL_NAMES_H_
#define DICTLOG_SERVER_POOL_NAMES_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace dictlog::pool {

inline constexpr size_t kMaxNameBytes = 128;

// INVALID_ARGUMENT naming `what` ("category", "pool name") if `name` breaks the rules.
absl::Status ValidateName(absl::string_view name, absl::string_view what);

struct RecordId {
  std::string pool;
  uint64_t seq = 0;
};

std::string FormatRecordId(absl::string_view pool, uint64_t seq);
// INVALID_ARGUMENT if `id` is not of the form above.
absl::StatusOr<RecordId> ParseRecordId(absl::string_view id);

}  // namespace dictlog::pool

#endif  // DICTLOG_SERVER_POOL_NAMES_H_
