// Batch decoding, optionally grouped by dictionary: the records of one batch (a
// MultiGet) can be decoded dictionary by dictionary instead of in request order, so
// each dictionary's decoding tables are pulled into the CPU cache once per batch, and
// the next group's tables can be prefetched while the current group decodes. Results
// come back in input order.
//
// Measured with dict_bench (benchmarks/results/HISTORY.md): grouping changed records/s by
// 0.90x..1.06x and is off by default. Prefetching pays only for compact dictionaries
// (a few lines each: +23..34% records/s in 3 of 4 measurements over 1,000-10,000 of
// them, -3% in the fourth); for a full one it would fetch the whole ~27 KB object and
// measured 0.72x..0.99x, so full dictionaries are never prefetched.
//
// Dictionaries are looked up with DictionaryLookup::FindMany, at most 256 records at a
// time (the server's cache holds its lock shared for that long instead of counting a
// reference per record).
//
// Thread-safe: uses the calling thread's zstd context.
#ifndef DICTLOG_CODEC_BATCH_DECODER_H_
#define DICTLOG_CODEC_BATCH_DECODER_H_

#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "codec/dictionary.h"
#include "codec/record_codec.h"

namespace dictlog::codec {

struct BatchDecodeOptions {
  // Decode all records of one dictionary before the next. Default off (see above).
  bool group_by_dictionary = false;
  // While a record decodes, prefetch what the next one will read when its dictionary
  // differs and is compact (the few lines of its tables, the tail of its content).
  // Default on.
  bool prefetch_next = true;
};

// Decodes `values` (stored record values); one result per value, in input order, each
// as DecodeRecord would return it.
std::vector<absl::StatusOr<DecodedRecord>> DecodeBatch(
    absl::Span<const absl::string_view> values, const DictionaryLookup& dictionaries,
    const BatchDecodeOptions& options = {});

// DecodeBatch for records parsed already (views into values the caller keeps alive).
std::vector<absl::StatusOr<DecodedRecord>> DecodeParsedBatch(
    absl::Span<const RecordView> views, const DictionaryLookup& dictionaries,
    const BatchDecodeOptions& options = {});

}  // namespace dictlog::codec

#endif  // DICTLOG_CODEC_BATCH_DECODER_H_
