#include "codec/test_dictionary.h"

#define ZDICT_STATIC_LINKING_ONLY
#include <zdict.h>

#include <cstdio>
#include <cstdlib>
#include <random>

#include "absl/strings/str_format.h"

namespace dictlog::codec {

std::vector<std::string> SyntheticLogLines(int count, uint32_t seed) {
  static const char* const kLevels[] = {"INFO", "WARN", "ERROR", "DEBUG"};
  static const char* const kComponents[] = {"dfs.DataNode", "sshd", "kernel",
                                            "nova.compute", "hadoop.mapred"};
  std::mt19937 rng(seed);
  std::vector<std::string> lines;
  lines.reserve(count);
  for (int i = 0; i < count; ++i) {
    const uint32_t r = rng();
    std::string line = absl::StrFormat(
        "2026-11-%02d %02d:%02d:%02d,%03d %s %s: block blk_%d replicated to "
        "10.250.%d.%d:50010 in %d ms (session %08x)",
        1 + r % 28, r % 24, (r >> 5) % 60, (r >> 11) % 60, (r >> 3) % 1000,
        kLevels[r % 4], kComponents[(r >> 7) % 5], rng() % 1000000, (r >> 13) % 256,
        (r >> 17) % 256, rng() % 5000, rng());
    if (r % 3 == 0) line += absl::StrFormat(" retry=%d peer=node-%d", r % 7, r % 113);
    lines.push_back(std::move(line));
  }
  return lines;
}

std::string TrainDictionaryForTest(const std::vector<std::string>& samples,
                                   size_t dict_bytes, uint32_t dictionary_id) {
  std::string joined;
  std::vector<size_t> sizes;
  for (const std::string& sample : samples) {
    joined += sample;
    sizes.push_back(sample.size());
  }
  std::string dict(dict_bytes, '\0');
  ZDICT_fastCover_params_t params = {};
  params.d = 8;
  params.k = 200;
  params.steps = 4;
  params.zParams.dictID = dictionary_id;
  params.zParams.compressionLevel = 3;
  const size_t n = ZDICT_optimizeTrainFromBuffer_fastCover(
      dict.data(), dict.size(), joined.data(), sizes.data(),
      static_cast<unsigned>(sizes.size()), &params);
  if (ZDICT_isError(n)) {
    std::fprintf(stderr, "test dictionary training failed: %s\n",
                 ZDICT_getErrorName(n));
    std::abort();
  }
  dict.resize(n);
  return dict;
}

}  // namespace dictlog::codec
