// PackedWriter: writes a v1::PackedFrames (docs/api.md "Packed MultiGetFrames") result by
// result: a per-response table of sources (category, dictionary id and content check,
// frame or payload), each result's bytes (a zstd frame without its magic number, or a
// payload) with its size and source index, and errors apart with the index of their id.
// The one writer of the packed form: LogEngine packs stored frames straight from their
// values, the service packs MultiGetFrames' results (peers' among them). Callers keep
// their own lookup of the sources they added (by what they can compare cheaply).
//
// Thread safety: none; one writer per response, used on one thread at a time.
#ifndef DICTLOG_SERVER_ENGINE_PACKED_WRITER_H_
#define DICTLOG_SERVER_ENGINE_PACKED_WRITER_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "proto/dictlog.pb.h"

namespace dictlog::engine {

class PackedWriter {
 public:
  // `out` (borrowed, must outlive the writer) is appended to.
  explicit PackedWriter(v1::PackedFrames* out) : out_(out) {}

  // Adds a source and returns its index. A payload source names no dictionary: its
  // id and check are written as 0 whatever is given.
  uint32_t AddSource(std::string category, uint32_t dictionary_id, uint32_t dictionary_check,
                     bool payload);
  // Appends one result of source `source`: a frame without its magic number, or a
  // payload.
  void AddResult(uint32_t source, absl::string_view bytes);
  // The same for a result whose bytes are `head` then `tail` (a short frame's header
  // and block: record_codec.h's SplitFrame).
  void AddResult(uint32_t source, absl::string_view head, absl::string_view tail);
  // Records `status` (not OK) as the error of the call's id `index`.
  void AddError(size_t index, const absl::Status& status);
  // Makes room for `bytes` more of results' bytes.
  void Reserve(size_t bytes);

 private:
  v1::PackedFrames* const out_;
};

}  // namespace dictlog::engine

#endif  // DICTLOG_SERVER_ENGINE_PACKED_WRITER_H_
