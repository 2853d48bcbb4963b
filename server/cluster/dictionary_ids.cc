#include "server/cluster/dictionary_ids.h"

#include "absl/strings/str_cat.h"
#include "codec/dictionary.h"

namespace dictlog::cluster {
namespace {

constexpr uint32_t kDictionaryMagic = 0xEC30A437;
constexpr uint32_t kClassBase = codec::kMinDictionaryId;

// Ids of one class: ids kClassBase + slot * partitions + partition.
uint32_t SlotsPerClass(int32_t partitions) {
  return (kMaxClusterDictionaryId - kClassBase + 1) / static_cast<uint32_t>(partitions);
}

uint32_t IdOfSlot(uint32_t slot, int32_t partition, int32_t partitions) {
  return kClassBase + slot * static_cast<uint32_t>(partitions) +
         static_cast<uint32_t>(partition);
}

uint32_t LoadLE32(absl::string_view s, size_t at) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(s[at + i]);
  return v;
}

}  // namespace

bool InPartitionClass(uint32_t id, int32_t partition, int32_t partitions) {
  if (id < kClassBase || id > kMaxClusterDictionaryId || partitions <= 0 ||
      static_cast<uint32_t>(partitions) > kMaxPartitionsWithIds) {
    return false;
  }
  const uint32_t offset = id - kClassBase;
  return offset % static_cast<uint32_t>(partitions) == static_cast<uint32_t>(partition) &&
         offset / static_cast<uint32_t>(partitions) < SlotsPerClass(partitions);
}

uint32_t ContentDictionaryId(absl::string_view content, int32_t partition,
                             int32_t partitions) {
  if (partitions <= 0 || SlotsPerClass(partitions) == 0) return 0;  // No class: no id.
  uint64_t hash = 14695981039346656037ull;
  for (size_t i = 0; i < content.size(); ++i) {
    const unsigned char c = (i >= 4 && i < 8) ? 0 : static_cast<unsigned char>(content[i]);
    hash ^= c;
    hash *= 1099511628211ull;
  }
  return IdOfSlot(static_cast<uint32_t>(hash % SlotsPerClass(partitions)), partition,
                  partitions);
}

absl::StatusOr<std::string> StampDictionaryId(std::string content, uint32_t id) {
  if (content.size() < 8 || LoadLE32(content, 0) != kDictionaryMagic) {
    return absl::InvalidArgumentError(
        "not a zstd dictionary (missing the dictionary magic number)");
  }
  for (int i = 0; i < 4; ++i) content[4 + i] = static_cast<char>((id >> (8 * i)) & 0xff);
  return content;
}

absl::StatusOr<uint32_t> ResolveDictionaryId(uint32_t proposed, int32_t partition,
                                             int32_t partitions, const IdHolderFn& holder,
                                             bool* existing) {
  if (!InPartitionClass(proposed, partition, partitions)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "dictionary id ", proposed, " is not in the id class of partition ", partition,
        " of ", partitions));
  }
  const uint32_t slots = SlotsPerClass(partitions);
  const uint32_t first = (proposed - kClassBase) / static_cast<uint32_t>(partitions);
  for (uint32_t k = 0; k < slots; ++k) {
    const uint32_t id = IdOfSlot((first + k) % slots, partition, partitions);
    absl::StatusOr<IdHolder> held = holder(id);
    if (!held.ok()) return held.status();
    if (*held == IdHolder::kDifferent) continue;
    *existing = *held == IdHolder::kSame;
    return id;
  }
  return absl::ResourceExhaustedError(absl::StrCat(
      "every dictionary id of partition ", partition, "'s class is taken (", slots, ")"));
}

}  // namespace dictlog::cluster
