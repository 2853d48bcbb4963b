// Batch decoding grouped by dictionary: the records of one batch (a MultiGet, a Scan
// chunk) are decoded dictionary by dictionary instead of in request order, so each
// dictionary's decoding tables are pulled into the CPU cache once per batch, and
// (optionally) the next group's tables are prefetched while the current group decodes.
// Results come back in input order. See benchmarks/RESULTS.md for what each trick buys.
//
// Thread-safe: uses the calling thread's zstd context.
#ifndef DICTLOG_SERVER_CODEC_BATCH_DECODER_H_
#define DICTLOG_SERVER_CODEC_BATCH_DECODER_H_

#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "server/codec/dictionary.h"
#include "server/codec/record_codec.h"

namespace dictlog::codec {

struct BatchDecodeOptions {
  // Decode all records of one dictionary before the next. Default on.
  bool group_by_dictionary = true;
  // While a group decodes, prefetch the next group's dictionary tables. Default on.
  bool prefetch_next = true;
};

// Decodes `values` (stored record values); one result per value, in input order, each
// as DecodeRecord would return it.
std::vector<absl::StatusOr<DecodedRecord>> DecodeBatch(
    absl::Span<const absl::string_view> values, const DictionaryLookup& dictionaries,
    const BatchDecodeOptions& options = {});

}  // namespace dictlog::codec

#endif  // DICTLOG_SERVER_CODEC_BATCH_DECODER_H_
