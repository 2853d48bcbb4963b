#include "server/codec/batch_decoder.h"

#include <algorithm>
#include <numeric>

#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>

namespace dictlog::codec {
namespace {

constexpr size_t kCacheLine = 64;

// Touches the decoding tables of `dict` so they are in cache when its group starts.
// A DDict keeps its entropy tables (~27 KB) in the object itself; ours reference their
// content, so ZSTD_sizeof_DDict is the object alone.
void PrefetchTables(const DecoderDictionary& dict) {
  const char* p = reinterpret_cast<const char*>(dict.ddict());
  const size_t bytes = ZSTD_sizeof_DDict(dict.ddict());
  for (size_t i = 0; i < bytes; i += kCacheLine) __builtin_prefetch(p + i, 0, 1);
}

struct Item {
  size_t index;
  uint32_t dictionary_id;
};

}  // namespace

std::vector<absl::StatusOr<DecodedRecord>> DecodeBatch(
    absl::Span<const absl::string_view> values, const DictionaryLookup& dictionaries,
    const BatchDecodeOptions& options) {
  std::vector<absl::StatusOr<DecodedRecord>> results(values.size(),
                                                     absl::UnknownError("not decoded"));
  std::vector<Item> items;
  items.reserve(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    absl::StatusOr<RecordView> view = ParseRecord(values[i]);
    if (!view.ok()) {
      results[i] = view.status();
      continue;
    }
    items.push_back({i, view->dictionary_id});
  }
  if (options.group_by_dictionary) {
    std::stable_sort(items.begin(), items.end(), [](const Item& a, const Item& b) {
      return a.dictionary_id < b.dictionary_id;
    });
  }
  for (size_t i = 0; i < items.size(); ++i) {
    const bool group_starts = i == 0 || items[i].dictionary_id != items[i - 1].dictionary_id;
    if (options.prefetch_next && group_starts) {
      auto next = std::find_if(items.begin() + i, items.end(), [&](const Item& item) {
        return item.dictionary_id != items[i].dictionary_id;
      });
      if (next != items.end() && next->dictionary_id != 0) {
        if (auto dict = dictionaries.Find(next->dictionary_id)) PrefetchTables(*dict);
      }
    }
    results[items[i].index] = DecodeRecord(values[items[i].index], dictionaries);
  }
  return results;
}

}  // namespace dictlog::codec
