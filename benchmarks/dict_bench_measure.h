// dict_bench's measuring harness: the units (records or blocks, stored as dictlog
// stores them), the dictionary copies cold cases decode with, the access patterns
// (uniform, Zipf over pools), and the interleaved median-of-repeats measurement with
// the two decoders compared (plain zstd, dictlog's batch path). Single-threaded: one
// bench thread uses these.
#ifndef DICTLOG_BENCHMARKS_DICT_BENCH_MEASURE_H_
#define DICTLOG_BENCHMARKS_DICT_BENCH_MEASURE_H_

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>

#include "benchmarks/load/sampler.h"
#include "codec/batch_decoder.h"
#include "codec/dictionary.h"

namespace dictlog::bench {

using Clock = std::chrono::steady_clock;

struct Row {
  std::string unit;
  int dict_bytes;
  std::string dict_mode;  // "-" without a dictionary.
  std::string kase;
  int dicts;
  std::string dist;
  double ratio, mb_per_s, records_per_s;
};

struct Unit {
  std::string raw;
  std::string stored;
  uint32_t dict_index = 0;  // Which cold copy (pool) it belongs to.
};

// A DictionaryLookup over dictionary copies whose ids are base_id + index.
class CopyLookup : public codec::DictionaryLookup {
 public:
  CopyLookup(uint32_t base_id, std::vector<std::shared_ptr<const codec::DecoderDictionary>> d)
      : base_id_(base_id), dicts_(std::move(d)) {}
  std::shared_ptr<const codec::DecoderDictionary> Find(uint32_t id) const override {
    const uint32_t i = id - base_id_;
    return id >= base_id_ && i < dicts_.size() ? dicts_[i] : nullptr;
  }
  const codec::DecoderDictionary& at(size_t i) const { return *dicts_[i]; }
  size_t memory_bytes() const {
    size_t total = 0;
    for (const auto& d : dicts_) total += d->memory_bytes();
    return total;
  }

 private:
  uint32_t base_id_;
  std::vector<std::shared_ptr<const codec::DecoderDictionary>> dicts_;
};

constexpr uint32_t kBaseId = 32768;

// `dict` (a zstd dictionary) with dictionary id `id` in its header.
std::string WithId(std::string dict, uint32_t id);
// Rewrites the 2-byte dictionary id of a stored magicless frame (same dictionary
// bytes, another copy's id) so it names copy `id`.
void SetFrameDictId(std::string* stored, uint32_t id);

// Draws unit indexes: uniform over units, or a Zipf(0.99)-popular dictionary (pool)
// and then one of its units.
class AccessPattern {
 public:
  AccessPattern(const std::vector<Unit>& units, int dicts, bool zipf, uint32_t seed)
      : rng_(seed),
        zipf_(zipf),
        units_(units.size()),
        ranks_(IdSampler::Create({Distribution::Kind::kZipf, 0.99},
                                 static_cast<size_t>(std::max(dicts, 1)))
                   .value()) {
    by_dict_.resize(dicts);
    for (size_t i = 0; i < units.size(); ++i) by_dict_[units[i].dict_index].push_back(i);
    rank_to_dict_.resize(dicts);
    std::iota(rank_to_dict_.begin(), rank_to_dict_.end(), 0);
    std::shuffle(rank_to_dict_.begin(), rank_to_dict_.end(), rng_);
  }
  size_t Next() {
    if (!zipf_) return rng_() % units_;
    while (true) {
      const auto& members = by_dict_[rank_to_dict_[ranks_.Sample(rng_)]];
      if (!members.empty()) return members[rng_() % members.size()];
    }
  }

 private:
  std::mt19937_64 rng_;
  bool zipf_;
  size_t units_;
  std::vector<std::vector<size_t>> by_dict_;
  IdSampler ranks_;  // Zipf(0.99) over dictionary ranks.
  std::vector<uint32_t> rank_to_dict_;
};

// One measured case: `decode` decodes the given unit indexes and returns the bytes it
// produced; `pattern` draws the indexes.
struct Case {
  Row row;
  std::unique_ptr<AccessPattern> pattern;
  std::function<size_t(const std::vector<size_t>&)> decode;
  std::vector<double> rps, mbps;
};


// Runs every case `repeats` times, interleaved (case A, B, C, A, B, C, ...) so that
// machine noise hits all alike, and fills each row with its median. The unit indexes
// are drawn before the clock starts (a Zipf draw costs about as much as a hot decode).
void MeasureInterleaved(std::vector<Case>& cases, int ops, int repeats, int batch);

// Decodes `unit` with plain zstd and `ddict`; returns the bytes produced.
size_t PlainDecode(const Unit& unit, const ZSTD_DDict* ddict);

// Decodes the picked units as the server's MultiGet does; returns the bytes produced.
size_t DictlogDecode(const std::vector<Unit>& units, const std::vector<size_t>& picks,
                     const codec::DictionaryLookup& lookup,
                     const codec::BatchDecodeOptions& options);

}  // namespace dictlog::bench

#endif  // DICTLOG_BENCHMARKS_DICT_BENCH_MEASURE_H_
