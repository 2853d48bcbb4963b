#include "codec/batch_decoder.h"

#include <algorithm>
#include <memory>
#include <numeric>

#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>

namespace dictlog::codec {
namespace {

constexpr size_t kCacheLine = 64;

void PrefetchRange(const char* p, size_t bytes) {
  for (size_t i = 0; i < bytes; i += kCacheLine) __builtin_prefetch(p + i, 0, 1);
}

// Touches what decoding a small record with `dict` reads, so it is in cache when that
// record's turn comes. A ZSTD_DDict (zstd 1.5.4) holds its tables inline: the
// literal-length, offset and match-length FSE tables (4,104 + 2,056 + 4,104 bytes,
// 8-byte cells after an 8-byte header) then the Huffman table (16,388 bytes) and the
// repeat offsets, after 24 bytes of pointers; its id and flags close the object. A
// compact dictionary's sequence tables use at most 2^kCompactMaxAccuracyLog cells and
// its frames never read the Huffman table, so only those few lines are fetched (full
// dictionaries are not prefetched at all). Then the tail of the content, where the
// trainer puts the most used segments, sized by the bytes the record decodes to (the
// seed thread's finding). A prefetch is only a hint: were the layout to change, this
// costs bandwidth, never correctness.
void PrefetchTables(const DecoderDictionary& dict, size_t decode_bytes) {
  if (!dict.compact()) return;  // The whole ~27 KB: measured slower (batch_decoder.h).
  const char* p = reinterpret_cast<const char*>(dict.ddict());
  const size_t bytes = dict.ddict_bytes();
  {
    constexpr size_t kHeader = 24;
    constexpr size_t kLiteralLengths = 8 * 513, kOffsets = 8 * 257, kMatchLengths = 8 * 513;
    constexpr size_t kHuffman = 4 * 4097;
    constexpr size_t kUsed = 8 * ((1 << kCompactMaxAccuracyLog) + 1);
    for (size_t table : {kHeader, kHeader + kLiteralLengths,
                         kHeader + kLiteralLengths + kOffsets}) {
      if (table + kUsed <= bytes) PrefetchRange(p + table, kUsed);
    }
    constexpr size_t kRepeatOffsets =
        kHeader + kLiteralLengths + kOffsets + kMatchLengths + kHuffman;
    if (kRepeatOffsets < bytes) __builtin_prefetch(p + kRepeatOffsets, 0, 1);
    if (bytes > 2 * kCacheLine) PrefetchRange(p + bytes - 2 * kCacheLine, 2 * kCacheLine);
  }
  const absl::string_view content = dict.content();
  const size_t tail = std::min(content.size(), 4 * decode_bytes);
  PrefetchRange(content.data() + content.size() - tail, tail);
}

struct Item {
  size_t index;
  RecordView view;
};

// At most this many records decode under one FindMany call (which may hold the
// dictionary cache's lock shared meanwhile).
constexpr size_t kChunk = 256;

void DecodeChunk(absl::Span<const Item> items, const DictionaryLookup& dictionaries,
                 const BatchDecodeOptions& options,
                 std::vector<absl::StatusOr<DecodedRecord>>* results) {
  std::vector<uint32_t> ids(items.size(), 0);
  for (size_t i = 0; i < items.size(); ++i) {
    if (items[i].view.framed()) ids[i] = items[i].view.dictionary_id;
  }
  dictionaries.FindMany(ids, [&](DictionaryLookup::Dictionaries dicts) {
    if (options.prefetch_next) {
      // The dictionary objects first (each names its DDict), all at once.
      for (const DecoderDictionary* d : dicts) {
        if (d != nullptr) __builtin_prefetch(d, 0, 1);
      }
    }
    for (size_t i = 0; i < items.size(); ++i) {
      if (options.prefetch_next && i + 1 < items.size() && dicts[i + 1] != nullptr &&
          dicts[i + 1] != dicts[i]) {
        PrefetchTables(*dicts[i + 1], items[i + 1].view.content_size);
      }
      (*results)[items[i].index] = DecodeParsed(items[i].view, dicts[i]);
    }
  });
}

// Decodes `items` into (*results)[item.index], grouped by dictionary if asked.
void DecodeItems(std::vector<Item>& items, const DictionaryLookup& dictionaries,
                 const BatchDecodeOptions& options,
                 std::vector<absl::StatusOr<DecodedRecord>>* results) {
  if (options.group_by_dictionary) {
    std::stable_sort(items.begin(), items.end(), [](const Item& a, const Item& b) {
      return a.view.dictionary_id < b.view.dictionary_id;
    });
  }
  const absl::Span<const Item> all(items);
  for (size_t at = 0; at < all.size(); at += kChunk) {
    DecodeChunk(all.subspan(at, kChunk), dictionaries, options, results);
  }
}

}  // namespace

std::vector<absl::StatusOr<DecodedRecord>> DecodeParsedBatch(
    absl::Span<const RecordView> views, const DictionaryLookup& dictionaries,
    const BatchDecodeOptions& options) {
  // Every slot is assigned below; default StatusOrs (UNKNOWN) cost no allocation.
  std::vector<absl::StatusOr<DecodedRecord>> results(views.size());
  std::vector<Item> items;
  items.reserve(views.size());
  for (size_t i = 0; i < views.size(); ++i) items.push_back({i, views[i]});
  DecodeItems(items, dictionaries, options, &results);
  return results;
}

std::vector<absl::StatusOr<DecodedRecord>> DecodeBatch(
    absl::Span<const absl::string_view> values, const DictionaryLookup& dictionaries,
    const BatchDecodeOptions& options) {
  // Every slot is assigned below (a parse error or a decode result); default
  // StatusOrs (UNKNOWN) cost no allocation.
  std::vector<absl::StatusOr<DecodedRecord>> results(values.size());
  std::vector<Item> items;
  items.reserve(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    absl::StatusOr<RecordView> view = ParseRecord(values[i]);
    if (view.ok()) {
      items.push_back({i, *view});
    } else {
      results[i] = std::move(view).status();
    }
  }
  DecodeItems(items, dictionaries, options, &results);
  return results;
}

}  // namespace dictlog::codec
