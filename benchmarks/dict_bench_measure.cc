#include "benchmarks/dict_bench_measure.h"

#include <cstdlib>

#include "codec/record_codec.h"
#include "codec/zstd_contexts.h"

namespace dictlog::bench {

std::string WithId(std::string dict, uint32_t id) {
  for (int i = 0; i < 4; ++i) dict[4 + i] = static_cast<char>((id >> (8 * i)) & 0xff);
  return dict;
}

void SetFrameDictId(std::string* stored, uint32_t id) {
  auto view = codec::ParseRecord(*stored);
  if (!view.ok() || view->dictionary_id == 0) return;
  const size_t frame_at = stored->size() - view->body.size();
  const uint8_t fhd = static_cast<uint8_t>((*stored)[frame_at]);
  if ((fhd & 3) != 2) std::abort();  // Copies use 2-byte ids (32768..65535).
  const size_t at = frame_at + 1 + (((fhd >> 5) & 1) ? 0 : 1);
  (*stored)[at] = static_cast<char>(id & 0xff);
  (*stored)[at + 1] = static_cast<char>(id >> 8);
}

void MeasureInterleaved(std::vector<Case>& cases, int ops, int repeats, int batch) {
  std::vector<size_t> all(static_cast<size_t>(ops) + batch);
  std::vector<size_t> picks(batch);
  for (int r = 0; r < repeats; ++r) {
    for (Case& c : cases) {
      for (size_t& p : all) p = c.pattern->Next();
      size_t bytes = 0;
      const auto start = Clock::now();
      for (int done = 0; done < ops; done += batch) {
        std::copy(all.begin() + done, all.begin() + done + batch, picks.begin());
        bytes += c.decode(picks);
      }
      const double secs = std::chrono::duration<double>(Clock::now() - start).count();
      c.rps.push_back(ops / secs);
      c.mbps.push_back(bytes / secs / 1e6);
    }
  }
  for (Case& c : cases) {
    std::sort(c.rps.begin(), c.rps.end());
    std::sort(c.mbps.begin(), c.mbps.end());
    c.row.records_per_s = c.rps[c.rps.size() / 2];
    c.row.mb_per_s = c.mbps[c.mbps.size() / 2];
  }
}

size_t PlainDecode(const Unit& unit, const ZSTD_DDict* ddict) {
  auto view = codec::ParseRecord(unit.stored);
  if (!view.ok()) std::abort();
  if (view->encoding == codec::Encoding::kRaw) return view->body.size();
  thread_local std::string out;
  out.resize(view->content_size);
  ZSTD_DCtx* dctx = codec::ThreadDecompressionContext();
  ZSTD_DCtx_refDDict(dctx, ddict);
  const size_t n = ZSTD_decompressDCtx(dctx, out.data(), out.size(), view->body.data(),
                                       view->body.size());
  if (ZSTD_isError(n)) std::abort();
  return n;
}

size_t DictlogDecode(const std::vector<Unit>& units, const std::vector<size_t>& picks,
                     const codec::DictionaryLookup& lookup,
                     const codec::BatchDecodeOptions& options) {
  std::vector<absl::string_view> views;
  views.reserve(picks.size());
  for (size_t p : picks) views.push_back(units[p].stored);
  size_t bytes = 0;
  for (auto& r : codec::DecodeBatch(views, lookup, options)) {
    if (!r.ok()) std::abort();
    bytes += r->payload.size();
  }
  return bytes;
}

}  // namespace dictlog::bench
