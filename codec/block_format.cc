#include "codec/block_format.h"

#include "absl/strings/str_cat.h"
#include "codec/varint.h"

namespace dictlog::codec {

std::string EncodeBlockContent(absl::Span<const absl::string_view> payloads) {
  std::string out;
  size_t total = 0;
  for (absl::string_view payload : payloads) total += payload.size();
  out.reserve(total + 2 * payloads.size() + 4);
  PutVarint64(payloads.size(), &out);
  for (absl::string_view payload : payloads) PutVarint64(payload.size(), &out);
  for (absl::string_view payload : payloads) out.append(payload.data(), payload.size());
  return out;
}

absl::StatusOr<std::vector<absl::string_view>> ParseBlockContent(
    absl::string_view content) {
  uint64_t count = 0;
  // Every entry takes at least its one-byte length, which bounds a corrupt count.
  if (!GetVarint64(&content, &count) || count > content.size()) {
    return absl::DataLossError("block has a malformed entry count");
  }
  std::vector<uint64_t> lengths(count);
  uint64_t total = 0;
  for (uint64_t& length : lengths) {
    if (!GetVarint64(&content, &length) || length > content.size()) {
      return absl::DataLossError("block has a malformed entry length");
    }
    total += length;
  }
  if (total != content.size()) {
    return absl::DataLossError(absl::StrCat("block entries add up to ", total,
                                            " bytes but the block holds ",
                                            content.size()));
  }
  std::vector<absl::string_view> payloads;
  payloads.reserve(count);
  for (uint64_t length : lengths) {
    payloads.push_back(content.substr(0, length));
    content.remove_prefix(length);
  }
  return payloads;
}

}  // namespace dictlog::codec
