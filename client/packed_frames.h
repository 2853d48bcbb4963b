// UnpackFrames: the per-id results of a packed MultiGetFrames response
// (v1::PackedFrames; docs/api.md "Packed MultiGetFrames"), as the per-result form would
// carry them: each record with its id (the request's), category, and its standard zstd
// frame (magic number put back) with its dictionary id, or its payload.
//
// The response comes from the network: every size, index and count is checked before
// it is used, and one that does not add up is DATA_LOSS for the whole call, never a
// partial or shifted answer. (A frame's bytes are not checksummed: a changed byte inside
// a frame is found only if the frame no longer decodes, as with the per-result form.)
//
// Thread Safety: a function over its arguments.
#ifndef DICTLOG_CLIENT_PACKED_FRAMES_H_
#define DICTLOG_CLIENT_PACKED_FRAMES_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "proto/dictlog.pb.h"

namespace dictlog::client {

// One result per id of `ids` (the request that `packed` answers), in order.
absl::StatusOr<std::vector<absl::StatusOr<v1::RecordFrame>>> UnpackFrames(
    absl::Span<const std::string> ids, const v1::PackedFrames& packed);

}  // namespace dictlog::client

#endif  // DICTLOG_CLIENT_PACKED_FRAMES_H_
