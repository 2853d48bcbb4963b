// Dictionary training: turns sample records into a standard zstd dictionary that
// carries our own dictionary id, using zstd's fastCover trainer with a parameter
// search over k (segment size). Stateless; safe to call from several threads.
#ifndef DICTLOG_DICT_TRAINER_TRAINER_H_
#define DICTLOG_DICT_TRAINER_TRAINER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace dictlog::trainer {

// zstd's trainers refuse fewer samples than this.
inline constexpr size_t kMinSamples = 5;

struct TrainOptions {
  // Target dictionary size in bytes (the result may be smaller). Default 16 KiB.
  size_t dictionary_bytes = 16 << 10;
  // Id stamped in the dictionary and in every frame compressed with it; must lie in
  // [codec::kMinDictionaryId, codec::kMaxDictionaryId].
  uint32_t dictionary_id = 0;
  // Level the dictionary's entropy tables are tuned for. Default 3.
  int compression_level = 3;
};

// FAILED_PRECONDITION (saying how many records are needed) if there are too few
// samples or too few bytes to train on; INVALID_ARGUMENT for a bad id or size.
absl::StatusOr<std::string> TrainDictionary(const std::vector<std::string>& samples,
                                            const TrainOptions& options);

}  // namespace dictlog::trainer

#endif  // DICTLOG_DICT_TRAINER_TRAINER_H_
