#include "server/pool/names.h"

#include <limits>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/escaping.h"

namespace dictlog::pool {

absl::Status ValidateName(absl::string_view name, absl::string_view what) {
  if (name.empty()) return absl::InvalidArgumentError(absl::StrCat(what, " is empty"));
  if (name.size() > kMaxNameBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, " is ", name.size(), " bytes; the limit is ", kMaxNameBytes));
  }
  for (char c : name) {
    if (c < 0x21 || c > 0x7e) {
      return absl::InvalidArgumentError(absl::StrCat(
          what, " \"", absl::CHexEscape(name),
          "\" has a byte outside printable ASCII (no spaces or control characters)"));
    }
  }
  return absl::OkStatus();
}

std::string FormatRecordId(absl::string_view pool, uint64_t seq) {
  return absl::StrCat(pool, "/", seq);
}

absl::StatusOr<RecordId> ParseRecordId(absl::string_view id) {
  const size_t slash = id.rfind('/');
  auto malformed = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat(
        "malformed record id \"", absl::CHexEscape(id.substr(0, 300)), "\": ", why,
        " (expected <pool>/<seq>)"));
  };
  if (slash == absl::string_view::npos) return malformed("no '/'");
  const absl::string_view pool = id.substr(0, slash);
  const absl::string_view digits = id.substr(slash + 1);
  if (!ValidateName(pool, "pool").ok()) return malformed("bad pool name");
  RecordId parsed;
  parsed.pool = std::string(pool);
  const bool all_digits =
      !digits.empty() && digits.find_first_not_of("0123456789") == absl::string_view::npos;
  if (!all_digits || digits[0] == '0') {
    return malformed("seq must be a decimal number >= 1 without leading zeros");
  }
  if (!absl::SimpleAtoi(digits, &parsed.seq)) {  // Only an overflow is left.
    return malformed(absl::StrCat("seq overflows: the largest is ",
                                  std::numeric_limits<uint64_t>::max()));
  }
  return parsed;
}

}  // namespace dictlog::pool
