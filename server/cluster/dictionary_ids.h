// Dictionary ids in cluster mode (docs/cluster.md "Dictionaries in the log", ADR 0020):
// an id comes from the dictionary's content, so two trainers racing on the same
// content propose the same id, and is resolved against the dictionaries already
// applied from the log, so every node stores a dictionary under the same id.
//
// Ids lie in [kMinDictionaryId, kMaxClusterDictionaryId] (two bytes in every frame
// header) and are split into one class per partition of dictlog.records: id - 32768
// modulo the partition count is the partition. A collision can then only be with a
// dictionary of the same partition, whose order every node sees the same, and "the
// next free id" is decided by that order alone.
//
// Stateless, thread-safe.
#ifndef DICTLOG_SERVER_CLUSTER_DICTIONARY_IDS_H_
#define DICTLOG_SERVER_CLUSTER_DICTIONARY_IDS_H_

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace dictlog::cluster {

// The largest id cluster mode gives (the last one a frame names in two bytes).
inline constexpr uint32_t kMaxClusterDictionaryId = 65535;
// Most partitions of dictlog.records whose classes hold ids (8 each at this count).
inline constexpr uint32_t kMaxPartitionsWithIds = 4096;

// Whether `id` lies in the class of `partition` (of `partitions` > 0).
bool InPartitionClass(uint32_t id, int32_t partition, int32_t partitions);

// The id of `content` (a standard zstd dictionary) in the class of `partition`:
// FNV-1a 64 of the content with its id bytes (4..7) read as zero, truncated to the
// class. The same content gives the same id whatever id its header holds. 0 (in no
// class) past kMaxPartitionsWithIds partitions.
uint32_t ContentDictionaryId(absl::string_view content, int32_t partition,
                             int32_t partitions);

// `content` with `id` in its header (bytes 4..7, little-endian). INVALID_ARGUMENT if
// it is not a zstd dictionary (shorter than 8 bytes or without the magic number).
absl::StatusOr<std::string> StampDictionaryId(std::string content, uint32_t id);

// What this node holds under an id, as the materializer asks while resolving one.
enum class IdHolder {
  kFree,       // Nothing: the id was never given.
  kSame,       // This very dictionary (same pool, same content but for the id bytes).
  kDifferent,  // Another dictionary (or one retired: ids are never reused).
};
using IdHolderFn = std::function<absl::StatusOr<IdHolder>(uint32_t id)>;

// The id a dictionary proposed as `proposed` (in the class of `partition`) is stored
// under: the first id from `proposed` on in the class, wrapping around, that is free
// or already holds this dictionary; `*existing` says which. INVALID_ARGUMENT for a
// proposal outside the class, RESOURCE_EXHAUSTED when the class is full; `holder`'s
// errors.
absl::StatusOr<uint32_t> ResolveDictionaryId(uint32_t proposed, int32_t partition,
                                             int32_t partitions, const IdHolderFn& holder,
                                             bool* existing);

}  // namespace dictlog::cluster

#endif  // DICTLOG_SERVER_CLUSTER_DICTIONARY_IDS_H_
