// record_levels: per-record compression with a 16 KiB dictionary (zstd's default trainer on the file's
// first half), the second half's records one frame each, as dictlog's record mode:
// ratio and us/record by level (best of 3 passes).
//
//   g++ -O2 benchmarks/results/ingest_bound/record_levels.cc -lzstd -o /tmp/record_levels
//   for f in ../shared/data/loghub/*.log; do /tmp/record_levels $f; done  # file,level,ratio,us
#include <zdict.h>
#include <zstd.h>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>
int main(int argc, char** argv) {
  std::ifstream in(argv[1]);
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  size_t half = lines.size() / 2;
  std::string samples; std::vector<size_t> sizes;
  for (size_t i = 0; i < half; ++i) { samples += lines[i]; sizes.push_back(lines[i].size()); }
  std::string dict(16384, 0);
  dict.resize(ZDICT_trainFromBuffer(dict.data(), dict.size(), samples.data(), sizes.data(), sizes.size()));
  ZSTD_CCtx* cc = ZSTD_createCCtx();
  std::string out(1 << 16, 0);
  std::string name = argv[1]; name = name.substr(name.find_last_of('/') + 1);
  for (int level : {-1, 1, 2, 3, 5}) {
    ZSTD_CDict* cd = ZSTD_createCDict(dict.data(), dict.size(), level);
    double best = 1e9; size_t raw = 0, bytes = 0;
    for (int pass = 0; pass < 3; ++pass) {
      raw = bytes = 0;
      auto t0 = std::chrono::steady_clock::now();
      for (int rep = 0; rep < 5; ++rep)
        for (size_t i = half; i < lines.size(); ++i) {
          ZSTD_CCtx_reset(cc, ZSTD_reset_session_and_parameters);
          ZSTD_CCtx_refCDict(cc, cd);
          size_t n = ZSTD_compress2(cc, out.data(), out.size(), lines[i].data(), lines[i].size());
          raw += lines[i].size(); bytes += n;
        }
      double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / (5.0 * (lines.size() - half));
      if (us < best) best = us;
    }
    std::printf("%s,%d,%.4f,%.3f\n", name.c_str(), level, double(raw) / bytes, best);
    ZSTD_freeCDict(cd);
  }
}
