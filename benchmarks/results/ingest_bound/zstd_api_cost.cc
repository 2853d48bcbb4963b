// Built and run outside Bazel for RESULTS.md "What bounds record+dict ingest now":
//   g++ -O2 zstd_api_cost.cc -l:libzstd.a -o /tmp/zstd_api_cost && /tmp/zstd_api_cost
// zstd per record (level 3, a 16 KiB fastCover dictionary per loghub file, its second
// half) with the context set up for every record as codec::EncodeRecord does, against
// set up once per file, the older one-shot CDict call, and a reused output buffer.
#define ZSTD_STATIC_LINKING_ONLY
#define ZDICT_STATIC_LINKING_ONLY
#include <zdict.h>
#include <zstd.h>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>
#include <cstring>

#include "../loghub_lines.h"

int main() {
  const char* names[] = {"Android","Apache","BGL","HDFS","Hadoop","HealthApp","Linux","OpenSSH","Spark","Zookeeper"};
  std::vector<std::vector<std::string>> halves; std::vector<ZSTD_CDict*> dicts;
  for (const char* name : names) {
    auto lines = Lines(std::string("/work/shared/data/loghub/") + name + ".log");
    size_t half = lines.size() / 2; std::string s; std::vector<size_t> sz;
    for (size_t i = 0; i < half; ++i) { s += lines[i]; sz.push_back(lines[i].size()); }
    std::string d(16384, 0); ZDICT_fastCover_params_t p = {}; p.d = 8; p.k = 1024; p.zParams.compressionLevel = 3;
    size_t n = ZDICT_trainFromBuffer_fastCover(d.data(), d.size(), s.data(), sz.data(), sz.size(), p);
    d.resize(n); dicts.push_back(ZSTD_createCDict(d.data(), d.size(), 3));
    halves.emplace_back(lines.begin() + half, lines.end());
  }
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  for (int variant = 0; variant < 4; ++variant) {
    double best = 1e9; size_t total = 0, recs = 0;
    for (int pass = 0; pass < 3; ++pass) {
      auto t0 = std::chrono::steady_clock::now(); total = 0; recs = 0;
      for (int rep = 0; rep < 10; ++rep)
      for (size_t f = 0; f < halves.size(); ++f) {
        if (variant == 1 || variant == 3) {
          ZSTD_CCtx_reset(cctx, ZSTD_reset_session_and_parameters);
          ZSTD_CCtx_setParameter(cctx, ZSTD_c_format, ZSTD_f_zstd1_magicless);
          ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, 1);
          ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 0);
          ZSTD_CCtx_refCDict(cctx, dicts[f]);
        }
        for (const std::string& r : halves[f]) {
          if (variant == 0) {
            ZSTD_CCtx_reset(cctx, ZSTD_reset_session_and_parameters);
            ZSTD_CCtx_setParameter(cctx, ZSTD_c_format, ZSTD_f_zstd1_magicless);
            ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, 1);
            ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 0);
            ZSTD_CCtx_refCDict(cctx, dicts[f]);
          }
          std::string out;
          if (variant == 3) { out.reserve(1 + ZSTD_compressBound(r.size())); }
          else { out.push_back(1); out.resize(1 + ZSTD_compressBound(r.size())); }
          size_t n;
          if (variant == 2) {
            ZSTD_frameParameters fp = {1, 0, 0};
            n = ZSTD_compress_usingCDict_advanced(cctx, out.data() + 1, out.size() - 1, r.data(), r.size(), dicts[f], fp);
          } else if (variant == 3) {
            // write into reserved capacity without zero-fill (simulate: use a thread buffer then assign)
            static thread_local std::string buf; if (buf.size() < 1 + ZSTD_compressBound(r.size())) buf.resize(1 + ZSTD_compressBound(r.size()));
            n = ZSTD_compress2(cctx, buf.data() + 1, buf.size() - 1, r.data(), r.size());
            buf[0] = 1; out.assign(buf.data(), 1 + n);
          } else {
            n = ZSTD_compress2(cctx, out.data() + 1, out.size() - 1, r.data(), r.size());
          }
          if (ZSTD_isError(n)) { printf("err %s\n", ZSTD_getErrorName(n)); return 1; }
          if (variant != 3) out.resize(1 + n);
          total += n; recs++;
        }
      }
      double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      best = std::min(best, s);
    }
    const char* vn[] = {"reset+params+refCDict per record, compress2 (today)", "configured once per pool, compress2", "compress_usingCDict_advanced (zstd1 frame)", "configured once, thread buffer then assign"};
    printf("%-55s %.3f us/record  %zu bytes\n", vn[variant], best / recs * 1e6, total);
  }
}
