// Batch blocks: how an append to a block-mode pool seals its own records straight into
// indexed blocks (ADR 0021), without writing them one by one and reading them back.
// PlanBatchBlocks groups a pool's records of one append exactly as the open tail would
// (oldest first, up to block_bytes of payload, at least one record; records whose
// payload alone fills a block stay single and in no block); EncodeBatchBlock makes one
// group's stored value. The group the append does not fill goes to the tail.
//
// Thread safety: functions of values; EncodeBatchBlock may run on several threads at
// once (each thread uses its own zstd context).
#ifndef DICTLOG_SERVER_BLOCK_BATCH_BLOCKS_H_
#define DICTLOG_SERVER_BLOCK_BATCH_BLOCKS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "codec/dictionary.h"

namespace dictlog::block {

// One record of a pool's part of an append; its seq is the part's first seq plus its
// position.
struct BatchRecord {
  uint32_t category_index = 0;
  absl::string_view payload;
};

// A block of the plan: the records at positions [begin, end) of the pool's part, less
// those whose payload alone fills a block. `begin` and `end - 1` are in the block.
struct PlannedBlock {
  size_t begin = 0;
  size_t end = 0;
};

// The blocks the records (their payload sizes, in seq order) fill, in order. The
// records after the last one's `end` that are below block_bytes are the tail's.
std::vector<PlannedBlock> PlanBatchBlocks(absl::Span<const uint64_t> raw_bytes,
                                          uint64_t block_bytes);

// Whether a record of `raw_bytes` payload may go into a block of `block_bytes`.
inline bool Packable(uint64_t raw_bytes, uint64_t block_bytes) {
  return raw_bytes < block_bytes;
}

// Appends to `out` the stored value of `block` of `records`: its indexed block content
// (codec::EncodeIndexedBlockContent) compressed as one frame with `dictionary` (null:
// without, at `level`) and a checksum, as the sealer stores a block.
absl::Status EncodeBatchBlock(absl::Span<const BatchRecord> records, PlannedBlock block,
                              uint64_t block_bytes, const codec::EncoderDictionary* dictionary,
                              int level, std::string* out);

}  // namespace dictlog::block

#endif  // DICTLOG_SERVER_BLOCK_BATCH_BLOCKS_H_
