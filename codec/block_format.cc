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

std::string EncodeIndexedBlockContent(absl::Span<const IndexedEntry> entries) {
  std::string out;
  size_t total = 0;
  for (const IndexedEntry& entry : entries) total += entry.payload.size();
  out.reserve(total + 4 * entries.size() + 4);
  PutVarint64(entries.size(), &out);
  uint64_t previous = entries.empty() ? 0 : entries.front().seq;
  for (const IndexedEntry& entry : entries) {
    PutVarint64(entry.seq - previous, &out);
    PutVarint32(entry.category_index, &out);
    PutVarint64(entry.payload.size(), &out);
    previous = entry.seq;
  }
  for (const IndexedEntry& entry : entries) {
    out.append(entry.payload.data(), entry.payload.size());
  }
  return out;
}

absl::StatusOr<std::vector<IndexedEntry>> ParseIndexedBlockContent(absl::string_view content,
                                                                   uint64_t first_seq) {
  uint64_t count = 0;
  // Every entry takes at least three bytes, which bounds a corrupt count.
  if (!GetVarint64(&content, &count) || count == 0 || count > content.size() / 3) {
    return absl::DataLossError("indexed block has a malformed entry count");
  }
  std::vector<IndexedEntry> entries(count);
  std::vector<uint64_t> lengths(count);
  uint64_t seq = first_seq;
  uint64_t total = 0;
  for (uint64_t i = 0; i < count; ++i) {
    uint64_t delta = 0;
    if (!GetVarint64(&content, &delta) || (i == 0) != (delta == 0) ||
        delta > UINT64_MAX - seq) {
      return absl::DataLossError("indexed block has a malformed seq");
    }
    seq += delta;
    entries[i].seq = seq;
    if (!GetVarint32(&content, &entries[i].category_index) ||
        !GetVarint64(&content, &lengths[i]) || lengths[i] > content.size()) {
      return absl::DataLossError("indexed block has a malformed entry");
    }
    total += lengths[i];
  }
  if (total != content.size()) {
    return absl::DataLossError(absl::StrCat("indexed block entries add up to ", total,
                                            " bytes but the block holds ",
                                            content.size()));
  }
  for (uint64_t i = 0; i < count; ++i) {
    entries[i].payload = content.substr(0, lengths[i]);
    content.remove_prefix(lengths[i]);
  }
  return entries;
}

}  // namespace dictlog::codec
