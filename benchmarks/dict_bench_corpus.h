// dict_bench's corpus: the loghub files' lines, first halves for training and second
// halves (per file) for the measured units. Plain functions; any thread.
#ifndef DICTLOG_BENCHMARKS_DICT_BENCH_CORPUS_H_
#define DICTLOG_BENCHMARKS_DICT_BENCH_CORPUS_H_

#include <cstddef>
#include <string>
#include <vector>

namespace dictlog::bench {

struct Corpus {
  std::vector<std::string> train;                  // First halves.
  std::vector<std::vector<std::string>> eval;      // Second halves, per file.
};

// Every *.log file of `dir`, sorted by name, split in halves; empty if `dir` cannot
// be listed or read.
Corpus Load(const std::string& dir);

// Units of `block_bytes` (0: one record each) from every file's second half.
std::vector<std::string> MakeUnits(const Corpus& corpus, size_t block_bytes);

}  // namespace dictlog::bench

#endif  // DICTLOG_BENCHMARKS_DICT_BENCH_CORPUS_H_
