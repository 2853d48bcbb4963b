// Built and run outside Bazel for RESULTS.md "Ingest 3": g++ -O2 zstd_per_record.cc -l:libzstd.a
// Per-record zstd compression with a dictionary: speed and ratio of call variants.
// First half of each loghub file trains (fastCover, 16 KiB), second half is measured.
#define ZSTD_STATIC_LINKING_ONLY
#define ZDICT_STATIC_LINKING_ONLY
#include <zstd.h>
#include <zdict.h>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>
using namespace std;
static vector<string> Lines(const string& path) {
  ifstream f(path); vector<string> out; string l;
  while (getline(f, l)) { if (!l.empty() && l.back()=='\r') l.pop_back(); out.push_back(l); }
  return out;
}
int main(int argc, char** argv) {
  const char* names[] = {"Android","Apache","BGL","HDFS","Hadoop","HealthApp","Linux","OpenSSH","Spark","Zookeeper"};
  int reps = 20;
  for (int level : {1, 2, 3}) {
  double t_cur=0,t_direct=0,t_nodict=0; size_t raw=0, s_cur=0, s_direct=0, s_nodict=0; size_t n=0;
  for (const char* name : names) {
    vector<string> lines = Lines(string("/work/shared/data/loghub/") + name + ".log");
    size_t half = lines.size()/2;
    string samples; vector<size_t> sizes;
    for (size_t i=0;i<half;i++){samples+=lines[i]; sizes.push_back(lines[i].size());}
    string dict(16384, 0);
    ZDICT_fastCover_params_t p = {}; p.d=8; p.k=0; p.steps=4; p.zParams.compressionLevel=level;
    size_t ds = ZDICT_optimizeTrainFromBuffer_fastCover(dict.data(), dict.size(), samples.data(), sizes.data(), sizes.size(), &p);
    if (ZDICT_isError(ds)) { fprintf(stderr,"train %s\n", ZDICT_getErrorName(ds)); return 1; }
    dict.resize(ds);
    ZSTD_CDict* cd = ZSTD_createCDict(dict.data(), dict.size(), level);
    ZSTD_CCtx* c = ZSTD_createCCtx();
    string out(4096, 0);
    auto now = []{return chrono::steady_clock::now();};
    for (int r=0;r<reps;r++) {
      auto a = now();
      for (size_t i=half;i<lines.size();i++){
        const string& s = lines[i];
        ZSTD_CCtx_reset(c, ZSTD_reset_session_and_parameters);
        ZSTD_CCtx_setParameter(c, ZSTD_c_format, ZSTD_f_zstd1_magicless);
        ZSTD_CCtx_setParameter(c, ZSTD_c_contentSizeFlag, 1);
        ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 0);
        ZSTD_CCtx_refCDict(c, cd);
        size_t k = ZSTD_compress2(c, out.data(), out.size(), s.data(), s.size());
        if (r==0) s_cur += k;
      }
      auto b = now();
      // Parameters set once; only the session reset per record.
      ZSTD_CCtx_reset(c, ZSTD_reset_session_and_parameters);
      ZSTD_CCtx_setParameter(c, ZSTD_c_format, ZSTD_f_zstd1_magicless);
      ZSTD_CCtx_setParameter(c, ZSTD_c_contentSizeFlag, 1);
      ZSTD_CCtx_refCDict(c, cd);
      for (size_t i=half;i<lines.size();i++){
        const string& s = lines[i];
        size_t k = ZSTD_compress2(c, out.data(), out.size(), s.data(), s.size());
        if (r==0) s_direct += k;
      }
      auto d = now();
      ZSTD_CCtx_reset(c, ZSTD_reset_session_and_parameters);
      ZSTD_CCtx_setParameter(c, ZSTD_c_format, ZSTD_f_zstd1_magicless);
      ZSTD_CCtx_setParameter(c, ZSTD_c_contentSizeFlag, 1);
      ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, level);
      for (size_t i=half;i<lines.size();i++){
        const string& s = lines[i];
        size_t k = ZSTD_compress2(c, out.data(), out.size(), s.data(), s.size());
        if (r==0) { s_nodict += k; raw += s.size(); n++; }
      }
      auto e = now();
      t_cur += chrono::duration<double>(b-a).count();
      t_direct += chrono::duration<double>(d-b).count();
      t_nodict += chrono::duration<double>(e-d).count();
    }
    ZSTD_freeCDict(cd); ZSTD_freeCCtx(c);
  }
  printf("level %d: records %zu  us/record: current %.3f  params-once %.3f  no-dict %.3f | ratio dict %.3f (params-once %.3f) no-dict %.3f\n",
         level, n, t_cur/reps/n*1e6, t_direct/reps/n*1e6, t_nodict/reps/n*1e6,
         (double)raw/s_cur, (double)raw/s_direct, (double)raw/s_nodict);
  }
}
