#include "codec/zstd_contexts.h"

#include <cstdlib>
#include <memory>

namespace dictlog::codec {
namespace {

struct CCtxDeleter {
  void operator()(ZSTD_CCtx* cctx) const { ZSTD_freeCCtx(cctx); }
};
struct DCtxDeleter {
  void operator()(ZSTD_DCtx* dctx) const { ZSTD_freeDCtx(dctx); }
};

ZSTD_DCtx* NewMagiclessDCtx() {
  ZSTD_DCtx* dctx = ZSTD_createDCtx();
  if (dctx == nullptr) std::abort();  // Out of memory: nothing sensible to do.
  ZSTD_DCtx_setParameter(dctx, ZSTD_d_format, ZSTD_f_zstd1_magicless);
  return dctx;
}

}  // namespace

ZSTD_CCtx* ThreadCompressionContext() {
  thread_local std::unique_ptr<ZSTD_CCtx, CCtxDeleter> cctx(ZSTD_createCCtx());
  if (cctx == nullptr) std::abort();
  return cctx.get();
}

ZSTD_DCtx* ThreadDecompressionContext() {
  thread_local std::unique_ptr<ZSTD_DCtx, DCtxDeleter> dctx(NewMagiclessDCtx());
  return dctx.get();
}

}  // namespace dictlog::codec
