// PackFrames: MultiGetFrames' results in the packed form of its response
// (v1::PackedFrames, asked for by MultiGetFramesRequest.packed; docs/api.md "Packed
// MultiGetFrames"): no id or message per record, frames without their magic number,
// categories and dictionary ids through a per-response table, errors apart.
//
// Thread safety: a function over its arguments.
#ifndef DICTLOG_SERVER_SERVICE_PACKED_FRAMES_H_
#define DICTLOG_SERVER_SERVICE_PACKED_FRAMES_H_

#include "absl/types/span.h"

#include "absl/status/statusor.h"
#include "proto/dictlog.pb.h"

namespace dictlog::service {

// Packs `results` (one per requested id, in request order; frames standard zstd frames,
// as LogEngine::MultiGetFrames returns them) into `out`, which must be empty.
// A frame without the magic number it should start with is packed as an INTERNAL error
// of its id (the engine never returns one).
void PackFrames(absl::Span<const absl::StatusOr<v1::RecordFrame>> results,
                v1::PackedFrames* out);

}  // namespace dictlog::service

#endif  // DICTLOG_SERVER_SERVICE_PACKED_FRAMES_H_
