// partial_decode: does a streaming decode that stops at the entry asked for (issue 19
// item 3) cost less than decoding the whole block frame? For each loghub file: a 16 KiB
// dictionary trained on its first half (zstd's default trainer); its second half cut
// into frames of --block bytes of consecutive lines, compressed at level 3 with the
// dictionary either as one zstd block (what dictlog writes) or with a flush every
// `piece` bytes of input (one zstd block per piece: a standard frame, later pieces
// still match into earlier ones). For each form: ratio, the time of a whole decode,
// and the mean time of a decode stopped once the output reaches an offset drawn at
// 8 even points of the frame (a record at a uniform position), best of 5 passes.
//
//   g++ -O2 benchmarks/results/partial_decode/partial_decode.cc -lzstd -o /tmp/partial_decode
//   for f in ../shared/data/loghub/*.log; do /tmp/partial_decode $f; done
#include <zdict.h>
#include <zstd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

namespace {

std::string Compress(ZSTD_CCtx* cc, const ZSTD_CDict* cd, const std::string& raw, size_t piece) {
  ZSTD_CCtx_reset(cc, ZSTD_reset_session_and_parameters);
  ZSTD_CCtx_refCDict(cc, cd);
  ZSTD_CCtx_setParameter(cc, ZSTD_c_checksumFlag, 1);  // As dictlog's block frames.
  std::string out(ZSTD_compressBound(raw.size()) + 64 * (raw.size() / piece + 1), 0);
  ZSTD_outBuffer ob{out.data(), out.size(), 0};
  for (size_t at = 0; at < raw.size(); at += piece) {
    const size_t n = std::min(piece, raw.size() - at);
    ZSTD_inBuffer ib{raw.data() + at, n, 0};
    const bool last = at + n >= raw.size();
    while (ZSTD_compressStream2(cc, &ob, &ib, last ? ZSTD_e_end : ZSTD_e_flush) != 0) {
    }
  }
  out.resize(ob.pos);
  return out;
}

// Microseconds per frame of decoding each frame until `stop(frame_size)` output bytes.
template <typename Stop>
double DecodeUs(ZSTD_DCtx* dc, const ZSTD_DDict* dd, const std::vector<std::string>& frames,
                const std::vector<size_t>& raw_sizes, Stop stop) {
  std::string out(1 << 17, 0);
  double best = 1e18;
  for (int pass = 0; pass < 5; ++pass) {
    const auto t0 = std::chrono::steady_clock::now();
    size_t decodes = 0;
    for (int rep = 0; rep < 10; ++rep) {
      for (size_t f = 0; f < frames.size(); ++f) {
        for (size_t limit : stop(raw_sizes[f])) {
          ZSTD_DCtx_reset(dc, ZSTD_reset_session_only);
          ZSTD_DCtx_refDDict(dc, dd);
          ZSTD_inBuffer ib{frames[f].data(), frames[f].size(), 0};
          ZSTD_outBuffer ob{out.data(), std::min(limit, out.size()), 0};
          while (ob.pos < ob.size) {
            const size_t r = ZSTD_decompressStream(dc, &ob, &ib);
            if (ZSTD_isError(r)) {
              std::fprintf(stderr, "decode: %s\n", ZSTD_getErrorName(r));
              std::exit(1);
            }
            if (r == 0) break;
          }
          ++decodes;
        }
      }
    }
    const double us =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
    best = std::min(best, us / decodes);
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: partial_decode FILE.log\n");
    return 2;
  }
  std::ifstream in(argv[1]);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  const size_t half = lines.size() / 2;
  std::string samples;
  std::vector<size_t> sizes;
  for (size_t i = 0; i < half; ++i) {
    samples += lines[i];
    sizes.push_back(lines[i].size());
  }
  std::string dict(16384, 0);
  dict.resize(ZDICT_trainFromBuffer(dict.data(), dict.size(), samples.data(), sizes.data(),
                                    sizes.size()));
  ZSTD_CDict* cd = ZSTD_createCDict(dict.data(), dict.size(), 3);
  ZSTD_DDict* dd = ZSTD_createDDict(dict.data(), dict.size());
  ZSTD_CCtx* cc = ZSTD_createCCtx();
  ZSTD_DCtx* dc = ZSTD_createDCtx();
  std::string name = argv[1];
  name = name.substr(name.find_last_of('/') + 1);
  for (size_t block : {2048, 4096, 16384, 65536}) {
    std::vector<std::string> raws;
    std::string cur;
    for (size_t i = half; i < lines.size(); ++i) {
      cur += lines[i];
      if (cur.size() >= block) raws.push_back(std::move(cur)), cur.clear();
    }
    std::vector<size_t> raw_sizes;
    size_t raw_total = 0;
    for (const std::string& r : raws) raw_sizes.push_back(r.size()), raw_total += r.size();
    for (size_t piece : {size_t(0), size_t(8192), size_t(4096)}) {
      if (piece >= block) continue;  // One piece: the frame dictlog writes (piece 0).
      if (piece == 0) piece = block * 2;
      std::vector<std::string> frames;
      size_t bytes = 0;
      for (const std::string& r : raws) {
        frames.push_back(Compress(cc, cd, r, piece));
        bytes += frames.back().size();
      }
      const double whole = DecodeUs(dc, dd, frames, raw_sizes,
                                    [](size_t n) { return std::vector<size_t>{n + 1}; });
      const double partial = DecodeUs(dc, dd, frames, raw_sizes, [](size_t n) {
        std::vector<size_t> stops;
        for (int j = 0; j < 8; ++j) stops.push_back(std::max<size_t>(1, n * (2 * j + 1) / 16));
        return stops;
      });
      std::printf("%s,%zu,%s,%zu,%.4f,%.2f,%.2f\n", name.c_str(), block,
                  piece > block ? "whole" : std::to_string(piece).c_str(), raws.size(),
                  double(raw_total) / bytes, whole, partial);
    }
  }
}
