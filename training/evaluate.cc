#include "training/evaluate.h"

#include <chrono>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "codec/dictionary.h"
#include "codec/record_codec.h"

namespace dictlog::trainer {
namespace {

using Clock = std::chrono::steady_clock;

// A dictionary loaded for both directions; both null when there is none.
struct LoadedDictionary {
  std::shared_ptr<const codec::EncoderDictionary> encoder;
  std::shared_ptr<const codec::DecoderDictionary> decoder;
};

// The lookup DecodeRecord needs: knows one dictionary (or none).
class SingleDictionary : public codec::DictionaryLookup {
 public:
  explicit SingleDictionary(std::shared_ptr<const codec::DecoderDictionary> dictionary)
      : dictionary_(std::move(dictionary)) {}

  std::shared_ptr<const codec::DecoderDictionary> Find(uint32_t id) const override {
    return dictionary_ != nullptr && dictionary_->id() == id ? dictionary_ : nullptr;
  }

 private:
  const std::shared_ptr<const codec::DecoderDictionary> dictionary_;
};

// `role` names the dictionary in errors ("candidate", "baseline").
absl::StatusOr<LoadedDictionary> Load(absl::string_view content, int level,
                                      absl::string_view role) {
  LoadedDictionary loaded;
  if (content.empty()) return loaded;
  auto encoder = codec::EncoderDictionary::Create(content, level);
  if (!encoder.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(role, " dictionary: ", encoder.status().message()));
  }
  auto decoder = codec::DecoderDictionary::Create(std::string(content));
  if (!decoder.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(role, " dictionary: ", decoder.status().message()));
  }
  loaded.encoder = *std::move(encoder);
  loaded.decoder = *std::move(decoder);
  return loaded;
}

codec::EncodeOptions EncodeOptionsFor(const LoadedDictionary& dictionary, int level) {
  codec::EncodeOptions options;
  options.compression_level = level;
  options.dictionary = dictionary.encoder.get();
  return options;
}

// The stored form of each record, in order; adds their sizes to *stored_bytes.
absl::StatusOr<std::vector<std::string>> EncodeAll(
    const std::vector<std::string>& records, const codec::EncodeOptions& options,
    uint64_t* stored_bytes) {
  std::vector<std::string> stored(records.size());
  for (size_t i = 0; i < records.size(); ++i) {
    RETURN_IF_ERROR(codec::EncodeRecord(records[i], options, &stored[i]));
    *stored_bytes += stored[i].size();
  }
  return stored;
}

absl::Status CheckRoundTrip(const std::vector<std::string>& records,
                            const std::vector<std::string>& stored,
                            const codec::DictionaryLookup& lookup) {
  for (size_t i = 0; i < records.size(); ++i) {
    absl::StatusOr<codec::DecodedRecord> decoded = codec::DecodeRecord(stored[i], lookup);
    if (!decoded.ok()) {
      return absl::InternalError(absl::StrCat("record ", i, " does not decode: ",
                                              decoded.status().message()));
    }
    if (decoded->payload != records[i]) {
      return absl::InternalError(
          absl::StrCat("record ", i, " decodes to different bytes"));
    }
  }
  return absl::OkStatus();
}

// Payload MB (1e6 bytes) per second of `elapsed`; 0 if no time was measured.
double MbPerSecond(uint64_t raw_bytes, Clock::duration elapsed) {
  const double seconds = std::chrono::duration<double>(elapsed).count();
  return seconds > 0 ? raw_bytes / 1e6 / seconds : 0;
}

double Ratio(uint64_t raw_bytes, uint64_t stored_bytes) {
  return stored_bytes == 0 ? 1.0 : static_cast<double>(raw_bytes) / stored_bytes;
}

}  // namespace

absl::StatusOr<Evaluation> Evaluate(const std::vector<std::string>& records,
                                    absl::string_view candidate,
                                    absl::string_view baseline, int level) {
  if (records.empty()) {
    return absl::InvalidArgumentError("no records to evaluate the dictionary on");
  }
  ASSIGN_OR_RETURN(const LoadedDictionary loaded_candidate,
                   Load(candidate, level, "candidate"));
  ASSIGN_OR_RETURN(const LoadedDictionary loaded_baseline,
                   Load(baseline, level, "baseline"));
  Evaluation evaluation;
  evaluation.records = records.size();
  for (const std::string& record : records) evaluation.raw_bytes += record.size();
  const Clock::time_point start = Clock::now();
  ASSIGN_OR_RETURN(const std::vector<std::string> stored,
                   EncodeAll(records, EncodeOptionsFor(loaded_candidate, level),
                             &evaluation.candidate_bytes));
  const Clock::time_point encoded = Clock::now();
  RETURN_IF_ERROR(
      CheckRoundTrip(records, stored, SingleDictionary(loaded_candidate.decoder)));
  const Clock::time_point decoded = Clock::now();
  RETURN_IF_ERROR(EncodeAll(records, EncodeOptionsFor(loaded_baseline, level),
                            &evaluation.baseline_bytes)
                      .status());
  evaluation.candidate_ratio = Ratio(evaluation.raw_bytes, evaluation.candidate_bytes);
  evaluation.baseline_ratio = Ratio(evaluation.raw_bytes, evaluation.baseline_bytes);
  evaluation.gain = evaluation.candidate_ratio / evaluation.baseline_ratio - 1;
  evaluation.compress_mb_per_s = MbPerSecond(evaluation.raw_bytes, encoded - start);
  evaluation.decompress_mb_per_s = MbPerSecond(evaluation.raw_bytes, decoded - encoded);
  return evaluation;
}

}  // namespace dictlog::trainer
