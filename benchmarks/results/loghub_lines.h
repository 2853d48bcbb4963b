// Shared by the stand-alone measurement programs under benchmarks/results/ (built with
// g++ outside Bazel and -l:libzstd.a; each names its command at its top): a loghub
// file's lines, and the 16 KiB dictionary they train on the first ones.
#ifndef DICTLOG_BENCHMARKS_RESULTS_LOGHUB_LINES_H_
#define DICTLOG_BENCHMARKS_RESULTS_LOGHUB_LINES_H_

#define ZDICT_STATIC_LINKING_ONLY
#include <zdict.h>

#include <fstream>
#include <string>
#include <vector>

// The lines of the file at `path`, each without its line end (loghub's are CRLF).
inline std::vector<std::string> Lines(const std::string& path) {
  std::ifstream f(path);
  std::vector<std::string> out;
  std::string line;
  while (std::getline(f, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    out.push_back(line);
  }
  return out;
}

// A 16 KiB fastCover dictionary (d=8, k searched in 4 steps, for zstd `level`) trained
// on lines[0, count); empty if zstd fails.
inline std::string TrainFastCover16K(const std::vector<std::string>& lines, size_t count,
                                     int level) {
  std::string samples;
  std::vector<size_t> sizes;
  for (size_t i = 0; i < count; ++i) {
    samples += lines[i];
    sizes.push_back(lines[i].size());
  }
  std::string dict(16384, 0);
  ZDICT_fastCover_params_t p = {};
  p.d = 8;
  p.steps = 4;
  p.zParams.compressionLevel = level;
  const size_t n = ZDICT_optimizeTrainFromBuffer_fastCover(dict.data(), dict.size(),
                                                           samples.data(), sizes.data(),
                                                           sizes.size(), &p);
  if (ZDICT_isError(n)) return "";
  dict.resize(n);
  return dict;
}

#endif  // DICTLOG_BENCHMARKS_RESULTS_LOGHUB_LINES_H_
