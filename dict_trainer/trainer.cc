#include "dict_trainer/trainer.h"

#define ZDICT_STATIC_LINKING_ONLY
#include <zdict.h>

#include "absl/strings/str_cat.h"
#include "server/codec/dictionary.h"

namespace dictlog::trainer {
namespace {

// Below a few times the dictionary size there is too little to learn from (zstd
// warns below 10x and recommends ~100x; the loghub half-files are 8-12x and train
// useful dictionaries, so 4x is the hard floor).
constexpr size_t kMinSampleBytesPerDictByte = 4;

absl::Status CheckInput(const std::vector<std::string>& samples,
                        const TrainOptions& options, size_t total_bytes) {
  if (options.dictionary_id < codec::kMinDictionaryId ||
      options.dictionary_id > codec::kMaxDictionaryId) {
    return absl::InvalidArgumentError(
        absl::StrCat("dictionary id ", options.dictionary_id, " is outside [",
                     codec::kMinDictionaryId, ", ", codec::kMaxDictionaryId, "]"));
  }
  if (options.dictionary_bytes < 256) {
    return absl::InvalidArgumentError("dictionary_bytes must be at least 256");
  }
  if (samples.size() < kMinSamples) {
    return absl::FailedPreconditionError(absl::StrCat(
        "training needs at least ", kMinSamples, " records; have ", samples.size()));
  }
  const size_t needed = options.dictionary_bytes * kMinSampleBytesPerDictByte;
  if (total_bytes < needed) {
    return absl::FailedPreconditionError(absl::StrCat(
        "training a ", options.dictionary_bytes, "-byte dictionary needs at least ",
        needed, " bytes of records; have ", total_bytes, " bytes in ", samples.size(),
        " records"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::string> TrainDictionary(const std::vector<std::string>& samples,
                                            const TrainOptions& options) {
  std::string joined;
  std::vector<size_t> sizes;
  sizes.reserve(samples.size());
  for (const std::string& sample : samples) {
    joined += sample;
    sizes.push_back(sample.size());
  }
  if (absl::Status status = CheckInput(samples, options, joined.size()); !status.ok()) {
    return status;
  }
  std::string dictionary(options.dictionary_bytes, '\0');
  ZDICT_fastCover_params_t params = {};
  params.d = 8;
  params.steps = 4;  // Search k (and keep d) over 4 steps, like zstd's default.
  params.nbThreads = 1;
  params.zParams.dictID = options.dictionary_id;
  params.zParams.compressionLevel = options.compression_level;
  const size_t size = ZDICT_optimizeTrainFromBuffer_fastCover(
      dictionary.data(), dictionary.size(), joined.data(), sizes.data(),
      static_cast<unsigned>(sizes.size()), &params);
  if (ZDICT_isError(size)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "zstd could not train a dictionary from ", samples.size(), " records (",
        joined.size(), " bytes): ", ZDICT_getErrorName(size)));
  }
  dictionary.resize(size);
  return dictionary;
}

}  // namespace dictlog::trainer
