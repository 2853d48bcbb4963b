// Reading stored records whatever their form: single values decode alone; entries of
// blocks (block mode) are decoded through their block, each distinct block read with
// one RocksDB MultiGet and decompressed once per call.
//
// Thread-safe: uses the calling thread's zstd contexts; the store and lookup are
// thread-safe.
#ifndef DICTLOG_SERVER_BLOCK_BLOCK_READER_H_
#define DICTLOG_SERVER_BLOCK_BLOCK_READER_H_

#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "server/block/byte_budget.h"
#include "codec/dictionary.h"
#include "codec/record_codec.h"
#include "server/store/store.h"

namespace dictlog::block {

// Decodes `values[i]`, the stored value of record `refs[i]`; one result per value, in
// order, as codec::DecodeRecord would return it. A block entry whose block is missing
// or has no such entry is DATA_LOSS. With a `budget` (borrowed for the call), each
// value's payload size is taken from it in order before anything is decoded (a
// frame's declared content size, a block entry's length in its decoded block): values
// it refuses are not decoded and get its ExhaustedError(). Values that fail before
// their size is known (malformed, missing block) take nothing from it.
std::vector<absl::StatusOr<codec::DecodedRecord>> DecodeStored(
    const store::Store& store, const codec::DictionaryLookup& dictionaries,
    absl::Span<const store::RecordRef> refs, absl::Span<const absl::string_view> values,
    ByteBudget* budget = nullptr);

// DecodeStored of records of pool `pool_id` as a scan of the store returns them.
std::vector<absl::StatusOr<codec::DecodedRecord>> DecodeScanned(
    const store::Store& store, const codec::DictionaryLookup& dictionaries,
    uint32_t pool_id, absl::Span<const store::ScannedRecord> records);

// One record's DecodeStored.
absl::StatusOr<codec::DecodedRecord> DecodeOne(const store::Store& store,
                                               const codec::DictionaryLookup& dictionaries,
                                               store::RecordRef ref,
                                               absl::string_view value);

}  // namespace dictlog::block

#endif  // DICTLOG_SERVER_BLOCK_BLOCK_READER_H_
