#include "benchmarks/compare/record_id.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace dictlog::compare {

absl::Status ValidateCategory(absl::string_view category) {
  if (category.empty() || category.size() > 128) {
    return absl::InvalidArgumentError("a category must be 1 to 128 bytes");
  }
  for (char c : category) {
    if (c < 0x21 || c > 0x7e) {
      return absl::InvalidArgumentError("a category must be printable ASCII (0x21..0x7e)");
    }
  }
  return absl::OkStatus();
}

std::string FormatRecordId(absl::string_view category, uint64_t seq) {
  return absl::StrCat(category, "/", seq);
}

absl::StatusOr<RecordId> ParseRecordId(absl::string_view id) {
  const size_t slash = id.rfind('/');
  if (slash == absl::string_view::npos) {
    return absl::InvalidArgumentError(absl::StrCat("malformed id \"", id, "\": no '/'"));
  }
  RecordId parsed;
  parsed.category = std::string(id.substr(0, slash));
  if (absl::Status status = ValidateCategory(parsed.category); !status.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("malformed id \"", id, "\": ",
                                                   status.message()));
  }
  const absl::string_view digits = id.substr(slash + 1);
  const bool decimal = !digits.empty() && digits.find_first_not_of("0123456789") ==
                                               absl::string_view::npos;
  if (!decimal || !absl::SimpleAtoi(digits, &parsed.seq) || parsed.seq == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("malformed id \"", id, "\": the sequence must be a number >= 1"));
  }
  return parsed;
}

std::string RecordKey(absl::string_view category, uint64_t seq) {
  std::string key(category);
  key.push_back('\0');
  for (int shift = 56; shift >= 0; shift -= 8) {
    key.push_back(static_cast<char>((seq >> shift) & 0xff));
  }
  return key;
}

}  // namespace dictlog::compare
