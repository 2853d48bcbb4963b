// Built and run outside Bazel for RESULTS.md "Record mode's append path" (2026-11-29):
//   g++ -O2 benchmarks/results/append_path/level_cost.cc -l:libzstd.a -o /tmp/level_cost
//   /tmp/level_cost /work/shared/data/loghub
// Record mode's zstd cost and ratio by level: one frame per record (magicless, content
// size, as dictlog stores them), with a 16 KiB fastCover dictionary per loghub file
// trained on its first half and loaded at that level; the second half compressed
// (out of sample). 20 repetitions, best of 3 passes per level; the ratio is payload
// bytes over frame bytes (no dictlog header).
#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "../loghub_lines.h"

int main(int argc, char** argv) {
  const std::string dir = argc > 1 ? argv[1] : "/work/shared/data/loghub";
  const char* names[] = {"Android", "Apache",    "BGL",   "HDFS",    "Hadoop",
                         "HealthApp", "Linux", "OpenSSH", "Spark", "Zookeeper"};
  constexpr int kReps = 20;
  const int levels[] = {-1, 1, 2, 3, 4, 5};
  std::vector<std::vector<std::string>> tests;
  std::vector<std::string> dicts;
  size_t records = 0, raw = 0;
  for (const char* name : names) {
    const std::vector<std::string> lines = Lines(dir + "/" + name + ".log");
    const size_t half = lines.size() / 2;
    dicts.push_back(TrainFastCover16K(lines, half, 3));
    if (dicts.back().empty()) return 1;
    tests.emplace_back(lines.begin() + half, lines.end());
    for (const std::string& l : tests.back()) raw += l.size();
    records += tests.back().size();
  }
  ZSTD_CCtx* c = ZSTD_createCCtx();
  std::string out(1 << 16, 0);
  std::printf("%zu records, %zu raw bytes, 16 KiB dictionaries, one frame per record\n",
              records, raw);
  std::printf("level  us/record  ratio  per-file ratios\n");
  for (int level : levels) {
    std::vector<ZSTD_CDict*> cdicts;
    for (const std::string& d : dicts) cdicts.push_back(ZSTD_createCDict(d.data(), d.size(), level));
    double best = 1e9;
    size_t bytes = 0;
    std::vector<double> ratios;
    for (int pass = 0; pass < 3; ++pass) {
      size_t total = 0;
      ratios.clear();
      auto a = std::chrono::steady_clock::now();
      for (size_t f = 0; f < tests.size(); ++f) {
        size_t file_raw = 0, file_bytes = 0;
        for (int r = 0; r < kReps; ++r) {
          for (const std::string& s : tests[f]) {
            ZSTD_CCtx_reset(c, ZSTD_reset_session_and_parameters);
            ZSTD_CCtx_setParameter(c, ZSTD_c_format, ZSTD_f_zstd1_magicless);
            ZSTD_CCtx_setParameter(c, ZSTD_c_contentSizeFlag, 1);
            ZSTD_CCtx_refCDict(c, cdicts[f]);
            const size_t k = ZSTD_compress2(c, out.data(), out.size(), s.data(), s.size());
            if (ZSTD_isError(k)) return 2;
            if (r == 0) {
              file_bytes += std::min(k, s.size() + 1);  // Stored raw when no smaller.
              file_raw += s.size();
            }
          }
        }
        total += file_bytes;
        ratios.push_back(static_cast<double>(file_raw) / file_bytes);
      }
      auto b = std::chrono::steady_clock::now();
      best = std::min(best, std::chrono::duration<double>(b - a).count());
      bytes = total;
    }
    std::printf("%5d  %9.3f  %5.3f ", level, best / kReps / records * 1e6,
                static_cast<double>(raw) / bytes);
    for (double r : ratios) std::printf(" %.2f", r);
    std::printf("\n");
    for (ZSTD_CDict* d : cdicts) ZSTD_freeCDict(d);
  }
  ZSTD_freeCCtx(c);
  return 0;
}
