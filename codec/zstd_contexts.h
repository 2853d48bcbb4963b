// Per-thread zstd contexts. Each thread that compresses or decompresses gets one
// compression and one decompression context, created on first use and freed when the
// thread exits, so context memory grows with threads, never with connections.
//
// Thread contract: the returned pointer belongs to the calling thread; never pass it
// to another thread. Callers set every parameter they rely on before each use.
#ifndef DICTLOG_CODEC_ZSTD_CONTEXTS_H_
#define DICTLOG_CODEC_ZSTD_CONTEXTS_H_

#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>

namespace dictlog::codec {

// This thread's compression context (parameters left from its previous use).
ZSTD_CCtx* ThreadCompressionContext();

// This thread's decompression context, set to read magicless frames.
ZSTD_DCtx* ThreadDecompressionContext();

}  // namespace dictlog::codec

#endif  // DICTLOG_CODEC_ZSTD_CONTEXTS_H_
