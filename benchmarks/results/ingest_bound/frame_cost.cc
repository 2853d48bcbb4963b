// Built and run outside Bazel for RESULTS.md "What bounds record-mode ingest":
//   g++ -O2 frame_cost.cc -l:libzstd.a -o /tmp/frame_cost && /tmp/frame_cost
// zstd's CPU per record when each record is its own frame (record mode) against frames
// of consecutive records up to 4 KiB (what RocksDB's per-SST dictionary compression
// compresses at flush) and 2 KiB (block2k), with the same dictionary and level 3.
// Per loghub file: a 16 KiB fastCover dictionary trained on its first half, the second
// half compressed; 20 repetitions, best of 3 passes reported per variant.
#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "../loghub_lines.h"

namespace {

// Frames of consecutive `lines` of at most `frame_bytes` raw bytes (0: one per line).
std::vector<std::string> Frames(const std::vector<std::string>& lines, size_t frame_bytes) {
  std::vector<std::string> out;
  std::string cur;
  for (const std::string& line : lines) {
    if (frame_bytes == 0) {
      out.push_back(line);
      continue;
    }
    if (!cur.empty() && cur.size() + line.size() > frame_bytes) {
      out.push_back(cur);
      cur.clear();
    }
    cur += line;
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

}  // namespace

int main() {
  const char* names[] = {"Android", "Apache",    "BGL",   "HDFS",    "Hadoop",
                         "HealthApp", "Linux", "OpenSSH", "Spark", "Zookeeper"};
  constexpr int kLevel = 3;
  constexpr int kReps = 20;
  const size_t frame_sizes[] = {0, 2048, 4096};
  double seconds[3] = {1e9, 1e9, 1e9};
  size_t compressed[3] = {0, 0, 0};
  size_t records = 0, raw = 0;
  std::vector<std::vector<std::string>> halves;
  std::vector<ZSTD_CDict*> dicts;
  for (const char* name : names) {
    std::vector<std::string> lines = Lines(std::string("/work/shared/data/loghub/") + name + ".log");
    const size_t half = lines.size() / 2;
    const std::string dict = TrainFastCover16K(lines, half, kLevel);
    if (dict.empty()) return 1;
    dicts.push_back(ZSTD_createCDict(dict.data(), dict.size(), kLevel));
    halves.emplace_back(lines.begin() + half, lines.end());
    for (const std::string& l : halves.back()) raw += l.size();
    records += halves.back().size();
  }
  ZSTD_CCtx* c = ZSTD_createCCtx();
  std::string out(1 << 16, 0);
  for (int pass = 0; pass < 3; ++pass) {
    for (int v = 0; v < 3; ++v) {
      size_t bytes = 0;
      auto a = std::chrono::steady_clock::now();
      for (size_t f = 0; f < halves.size(); ++f) {
        const std::vector<std::string> frames = Frames(halves[f], frame_sizes[v]);
        ZSTD_CCtx_reset(c, ZSTD_reset_session_and_parameters);
        ZSTD_CCtx_setParameter(c, ZSTD_c_format, ZSTD_f_zstd1_magicless);
        ZSTD_CCtx_setParameter(c, ZSTD_c_contentSizeFlag, 1);
        ZSTD_CCtx_refCDict(c, dicts[f]);
        for (int r = 0; r < kReps; ++r) {
          for (const std::string& s : frames) {
            size_t k = ZSTD_compress2(c, out.data(), out.size(), s.data(), s.size());
            if (ZSTD_isError(k)) return 2;
            if (r == 0) bytes += k;
          }
        }
      }
      auto b = std::chrono::steady_clock::now();
      seconds[v] = std::min(seconds[v], std::chrono::duration<double>(b - a).count());
      compressed[v] = bytes;
    }
  }
  const char* label[] = {"one frame per record", "2 KiB frames", "4 KiB frames"};
  std::printf("%zu records, %zu raw bytes, level %d, 16 KiB dictionaries\n", records, raw, kLevel);
  for (int v = 0; v < 3; ++v) {
    const double us = seconds[v] / kReps / records * 1e6;
    std::printf("%-22s us/record %.3f  MB/s %.1f  ratio %.3f  CPU s per 2,000,000 records %.2f\n",
                label[v], us, raw * kReps / seconds[v] / 1e6,
                static_cast<double>(raw) / compressed[v], us * 2.0);
  }
  return 0;
}
