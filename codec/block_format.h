// The content of a block (block mode): several records' payloads packed together, then
// compressed as one record value (record_codec.h) with the pool's dictionary, so one
// frame and one dictionary id cover them all:
//
//   block_content := count:varint length:varint{count} payload{count}
//
// Entry i's payload starts after the lengths of entries 0..i-1. Categories are not in
// the block: each record's entry value in the records family carries its own.
//
// An indexed block (block mode since ADR 0016) is found by its key alone, without
// per-record entry values, so it carries each record's seq and category itself:
//
//   indexed_block_content := count:varint
//                            (seq_delta:varint category_index:varint length:varint){count}
//                            payload{count}
//
// Entry 0's seq is the block key's first seq (its seq_delta is 0); entry i's is entry
// i-1's plus its seq_delta (>= 1), so seqs increase and gaps cost nothing.
//
// Stateless and thread-safe.
#ifndef DICTLOG_CODEC_BLOCK_FORMAT_H_
#define DICTLOG_CODEC_BLOCK_FORMAT_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace dictlog::codec {

// The block content of `payloads`, in order.
std::string EncodeBlockContent(absl::Span<const absl::string_view> payloads);

// The payloads of a block content, viewing into `content`. DATA_LOSS if it does not
// parse exactly (lengths past the end, trailing bytes).
absl::StatusOr<std::vector<absl::string_view>> ParseBlockContent(
    absl::string_view content);

// One record of an indexed block.
struct IndexedEntry {
  uint64_t seq = 0;
  uint32_t category_index = 0;
  absl::string_view payload;
};

// The indexed block content of `entries` (seqs strictly increasing, at least one).
std::string EncodeIndexedBlockContent(absl::Span<const IndexedEntry> entries);

// The entries of an indexed block content whose first seq is `first_seq`, viewing into
// `content`. DATA_LOSS if it does not parse exactly (a first delta other than 0, a zero
// or overflowing delta, lengths past the end, trailing bytes).
absl::StatusOr<std::vector<IndexedEntry>> ParseIndexedBlockContent(absl::string_view content,
                                                                   uint64_t first_seq);

}  // namespace dictlog::codec

#endif  // DICTLOG_CODEC_BLOCK_FORMAT_H_
