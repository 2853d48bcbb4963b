#include "benchmarks/dict_bench_corpus.h"

#include "training/files.h"

namespace dictlog::bench {

Corpus Load(const std::string& dir) {
  Corpus corpus;
  const absl::StatusOr<std::vector<trainer::LogFile>> files = trainer::ReadLogFiles(dir);
  if (!files.ok()) return corpus;
  for (const trainer::LogFile& file : *files) {
    const std::vector<std::string>& lines = file.lines;
    const size_t half = lines.size() / 2;
    corpus.train.insert(corpus.train.end(), lines.begin(), lines.begin() + half);
    corpus.eval.emplace_back(lines.begin() + half, lines.end());
  }
  return corpus;
}

std::vector<std::string> MakeUnits(const Corpus& corpus, size_t block_bytes) {
  std::vector<std::string> units;
  for (const auto& lines : corpus.eval) {
    std::string block;
    for (const std::string& line : lines) {
      if (block_bytes == 0) {
        units.push_back(line);
        continue;
      }
      if (!block.empty() && block.size() + line.size() + 1 > block_bytes) {
        units.push_back(std::move(block));
        block.clear();
      }
      block += line;
      block += '\n';
    }
    if (!block.empty()) units.push_back(std::move(block));
  }
  return units;
}

}  // namespace dictlog::bench
