// frame_corruption: what flipped bytes in a stored value do, with and without zstd's
// content checksum, and what the checksum costs (docs/adr/0007-frame-checksums.md).
// Per loghub file, a dictionary trained on the first half; the second half stored as
// single record values and as 1 KiB blocks (block mode), each variant with and
// without the checksum. Every value gets --trials_per_value trials of 1..--max_flips
// random bytes XOR random masks, anywhere in the value (flags byte included), decoded
// by the real codec: right payload, an error (always DATA_LOSS), or a wrong payload.
//
//   bazel run -c opt //benchmarks:frame_corruption -- --dir=$PWD/../shared/data/loghub
#include <algorithm>
#include <iostream>
#include <map>
#include <random>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_format.h"
#include "training/files.h"
#include "training/trainer.h"
#include "codec/block_format.h"
#include "codec/dictionary.h"
#include "codec/record_codec.h"

ABSL_FLAG(std::string, dir, "../shared/data/loghub", "directory of *.log files");
ABSL_FLAG(int, max_flips, 8, "bytes flipped per trial: 1..max_flips");
ABSL_FLAG(int, trials_per_value, 20, "flip trials per stored value");
ABSL_FLAG(int, block_bytes, 1024, "payload bytes per block");
ABSL_FLAG(uint64_t, seed, 1, "random seed");

namespace dictlog {
namespace {

struct Outcome {
  uint64_t values = 0, records = 0, stored = 0, trials = 0, right = 0, error = 0, wrong = 0;
};

class OneDictionary : public codec::DictionaryLookup {
 public:
  explicit OneDictionary(std::shared_ptr<const codec::DecoderDictionary> d) : d_(d) {}
  std::shared_ptr<const codec::DecoderDictionary> Find(uint32_t id) const override {
    return id == d_->id() ? d_ : nullptr;
  }

 private:
  std::shared_ptr<const codec::DecoderDictionary> d_;
};

// Decodes `value` (a block's when `block`) and compares with `payloads`.
int Classify(const std::string& value, bool block, const std::vector<std::string>& payloads,
             const codec::DictionaryLookup& dicts) {
  absl::StatusOr<codec::DecodedRecord> decoded = codec::DecodeRecord(value, dicts);
  if (!decoded.ok()) return 1;
  if (!block) return decoded->payload == payloads[0] ? 0 : 2;
  auto parts = codec::ParseBlockContent(decoded->payload);
  if (!parts.ok()) return 1;
  if (parts->size() != payloads.size()) return 2;
  for (size_t i = 0; i < payloads.size(); ++i) {
    if ((*parts)[i] != payloads[i]) return 2;
  }
  return 0;
}

void Trials(const std::string& value, bool block, const std::vector<std::string>& payloads,
            const codec::DictionaryLookup& dicts, std::mt19937_64& rng, Outcome* out) {
  ++out->values;
  out->records += payloads.size();
  out->stored += value.size();
  for (int t = 0; t < absl::GetFlag(FLAGS_trials_per_value); ++t) {
    std::string flipped = value;
    const int n = 1 + static_cast<int>(rng() % absl::GetFlag(FLAGS_max_flips));
    for (int i = 0; i < n; ++i) {
      const size_t at = rng() % flipped.size();
      flipped[at] = static_cast<char>(flipped[at] ^ (1 + rng() % 255));
    }
    ++out->trials;
    const int c = Classify(flipped, block, payloads, dicts);
    (c == 0 ? out->right : c == 1 ? out->error : out->wrong)++;
  }
}

int Run() {
  trainer::LineOptions line_options;
  line_options.skip_empty = true;
  const absl::StatusOr<std::vector<trainer::LogFile>> files =
      trainer::ReadLogFiles(absl::GetFlag(FLAGS_dir), line_options);
  if (!files.ok()) {
    std::cerr << files.status() << "\n";
    return 1;
  }
  std::mt19937_64 rng(absl::GetFlag(FLAGS_seed));
  std::map<std::string, Outcome> outcomes;
  uint32_t next_id = codec::kMinDictionaryId;
  for (const trainer::LogFile& file : *files) {
    const std::vector<std::string>& lines = file.lines;
    const size_t half = lines.size() / 2;
    auto content = trainer::TrainDictionary(
        std::vector<std::string>(lines.begin(), lines.begin() + half), {16384, next_id++, 3});
    if (!content.ok()) continue;
    auto encoder = codec::EncoderDictionary::Create(*content, 3);
    auto decoder = codec::DecoderDictionary::Create(*content);
    if (!encoder.ok() || !decoder.ok()) return 1;
    OneDictionary dicts(*decoder);
    std::vector<std::string> pending;
    size_t pending_bytes = 0;
    for (size_t i = half; i < std::min(lines.size(), half + 2000); ++i) {
      for (bool checksum : {false, true}) {
        codec::EncodeOptions options;
        options.dictionary = encoder->get();
        options.checksum = checksum;
        std::string value;
        if (!codec::EncodeRecord(lines[i], options, &value).ok()) return 1;
        Trials(value, false, {lines[i]}, dicts, rng,
               &outcomes[checksum ? "record + checksum" : "record"]);
      }
      pending.push_back(lines[i]);
      pending_bytes += lines[i].size();
      if (pending_bytes < static_cast<size_t>(absl::GetFlag(FLAGS_block_bytes))) continue;
      std::vector<absl::string_view> views(pending.begin(), pending.end());
      for (bool checksum : {false, true}) {
        codec::EncodeOptions options;
        options.dictionary = encoder->get();
        options.checksum = checksum;
        std::string value;
        if (!codec::EncodeRecord(codec::EncodeBlockContent(views), options, &value).ok()) {
          return 1;
        }
        Trials(value, true, pending, dicts, rng,
               &outcomes[checksum ? "1 KiB block + checksum" : "1 KiB block"]);
      }
      pending.clear();
      pending_bytes = 0;
    }
  }
  std::cout << absl::StrFormat("%-24s %8s %9s %9s %8s %8s %10s\n", "variant", "values",
                               "B/record", "trials", "right%", "error%", "wrong%");
  for (const auto& [name, o] : outcomes) {
    std::cout << absl::StrFormat("%-24s %8d %9.2f %9d %8.2f %8.2f %10.3f\n", name, o.values,
                                 double(o.stored) / o.records, o.trials,
                                 100.0 * o.right / o.trials, 100.0 * o.error / o.trials,
                                 100.0 * o.wrong / o.trials);
  }
  return 0;
}

}  // namespace
}  // namespace dictlog

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return dictlog::Run();
}
