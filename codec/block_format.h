// The content of a block (block mode): several records' payloads packed together, then
// compressed as one record value (record_codec.h) with the pool's dictionary, so one
// frame and one dictionary id cover them all:
//
//   block_content := count:varint length:varint{count} payload{count}
//
// Entry i's payload starts after the lengths of entries 0..i-1. Categories are not in
// the block: each record's entry value in the records family carries its own.
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

}  // namespace dictlog::codec

#endif  // DICTLOG_CODEC_BLOCK_FORMAT_H_
