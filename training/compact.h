// Compact dictionaries (issue 8): a standard zstd dictionary, with its id, whose
// sequence tables (offsets, match lengths, literal lengths) are rewritten at a low
// accuracy log, so that decoding a record with a cold dictionary pulls a few hundred
// bytes of FSE tables from memory instead of ~10 KB. Stock zstd loads the result like
// any other dictionary (`zstd -D` works); the content and the Huffman tree stay as
// trained. Pure functions; thread-safe.
#ifndef DICTLOG_TRAINING_COMPACT_H_
#define DICTLOG_TRAINING_COMPACT_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "codec/dictionary_format.h"

namespace dictlog::trainer {

using codec::FseTable;

struct CompactOptions {
  // Accuracy log of the three sequence tables, 5 (32 cells) .. 6
  // (codec::kCompactMaxAccuracyLog); up to 8 for measurements, though a dictionary
  // above 6 is not compact to the codec. Default 5 (benchmarks/results/HISTORY.md).
  int accuracy_log = 5;
};

// `table` redistributed over 2^accuracy_log cells (when its own log is higher; else
// returned as is): its most probable symbols keep a share in proportion to their
// counts, at least one cell each; symbols too rare to earn a cell are dropped (a frame
// that needs one falls back to zstd's predefined table for that block).
FseTable Renormalize(const FseTable& table, int accuracy_log);

// The compact form of formatted dictionary `dictionary` (same id, content, Huffman
// tree and repeat offsets). INVALID_ARGUMENT for a bad accuracy log or a dictionary
// that is not a formatted zstd dictionary.
absl::StatusOr<std::string> MakeCompact(absl::string_view dictionary,
                                        const CompactOptions& options);

}  // namespace dictlog::trainer

#endif  // DICTLOG_TRAINING_COMPACT_H_
