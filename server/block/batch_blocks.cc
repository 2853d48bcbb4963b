#include "server/block/batch_blocks.h"

#include "codec/block_format.h"
#include "codec/record_codec.h"

namespace dictlog::block {

std::vector<PlannedBlock> PlanBatchBlocks(absl::Span<const uint64_t> raw_bytes,
                                          uint64_t block_bytes) {
  std::vector<PlannedBlock> blocks;
  PlannedBlock open;
  uint64_t sum = 0;
  bool any = false;
  for (size_t i = 0; i < raw_bytes.size(); ++i) {
    if (!Packable(raw_bytes[i], block_bytes)) continue;
    if (any && sum + raw_bytes[i] > block_bytes) {  // Full: the tail would take it now.
      blocks.push_back(open);
      any = false;
      sum = 0;
    }
    if (!any) open.begin = i;
    any = true;
    open.end = i + 1;
    sum += raw_bytes[i];
  }
  if (any && sum >= block_bytes) blocks.push_back(open);
  return blocks;
}

absl::Status EncodeBatchBlock(absl::Span<const BatchRecord> records, PlannedBlock block,
                              uint64_t block_bytes, const codec::EncoderDictionary* dictionary,
                              int level, std::string* out) {
  std::vector<codec::IndexedEntry> entries;
  entries.reserve(block.end - block.begin);
  for (size_t i = block.begin; i < block.end; ++i) {
    if (!Packable(records[i].payload.size(), block_bytes)) continue;
    entries.push_back({i, records[i].category_index, records[i].payload});
  }
  codec::EncodeOptions encode;
  encode.dictionary = dictionary;
  encode.compression_level = level;
  encode.checksum = true;  // As sealed blocks (ADR 0007).
  return codec::EncodeRecord(codec::EncodeIndexedBlockContent(entries), encode, out);
}

}  // namespace dictlog::block
