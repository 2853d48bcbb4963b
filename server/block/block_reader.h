// Reading stored records whatever their form: single values decode alone; entries of
// blocks (block mode) are decoded through their block, each distinct block read with
// one RocksDB MultiGet and decompressed once per call; records sealed into indexed
// blocks (ADR 0016: no value in the records family) are found by seeking to the block
// whose seq range holds them, each block again decompressed once per call.
//
// Thread-safe: uses the calling thread's zstd contexts; the store and lookup are
// thread-safe.
#ifndef DICTLOG_SERVER_BLOCK_BLOCK_READER_H_
#define DICTLOG_SERVER_BLOCK_BLOCK_READER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "server/block/byte_budget.h"
#include "server/block/decoded_block_cache.h"
#include "codec/block_format.h"
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
// `indexed_from` is empty or has one element per value: 0, or, for a record absent
// from the records family (its value is then ignored), its pool's first indexed seq
// (Pool::indexed_from_seq()): the record is read from the indexed block holding it,
// NOT_FOUND if none does. With a `cache` (borrowed for the call), such records are
// looked for there first, and the indexed blocks read from the store are offered to it.
std::vector<absl::StatusOr<codec::DecodedRecord>> DecodeStored(
    const store::Store& store, const codec::DictionaryLookup& dictionaries,
    absl::Span<const store::RecordRef> refs, absl::Span<const absl::string_view> values,
    ByteBudget* budget = nullptr, absl::Span<const uint64_t> indexed_from = {},
    DecodedBlockCache* cache = nullptr);

// DecodeStored of records of pool `pool_id` as a scan of the store returns them.
std::vector<absl::StatusOr<codec::DecodedRecord>> DecodeScanned(
    const store::Store& store, const codec::DictionaryLookup& dictionaries,
    uint32_t pool_id, absl::Span<const store::ScannedRecord> records);

// One record's DecodeStored.
absl::StatusOr<codec::DecodedRecord> DecodeOne(const store::Store& store,
                                               const codec::DictionaryLookup& dictionaries,
                                               store::RecordRef ref,
                                               absl::string_view value);

// Decompresses and parses an indexed block. DATA_LOSS if it does not decode or its
// entries disagree with its key's seqs.
absl::StatusOr<IndexedContent> DecodeIndexedBlock(const codec::DictionaryLookup& dictionaries,
                                                  const store::IndexedBlock& block);

// The records of pool `pool_id` with seq >= from_seq in seq order, as
// Store::ScanRecords returns them (at most `max_records`; stopping once their values
// reach `max_bytes`), with the records of the pool's indexed blocks (keyed at or after
// `indexed_from`; 0: the pool has none) among them as raw record values (the payload
// with its category, codec::EncodeRaw), so callers filter and decode them as any
// value. Returns fewer than `max_records` only at the end of the pool, or at the end
// of an indexed block. DATA_LOSS (naming the block) if an indexed block does not decode.
// Both families are read from one snapshot (`snapshot`, or one taken for the call), so
// a block sealed while the call runs cannot hide its records from it.
absl::StatusOr<std::vector<store::ScannedRecord>> ScanPool(
    const store::Store& store, const codec::DictionaryLookup& dictionaries,
    uint32_t pool_id, uint64_t indexed_from, uint64_t from_seq, size_t max_records,
    size_t max_bytes = SIZE_MAX, const store::ReadSnapshot* snapshot = nullptr);

}  // namespace dictlog::block

#endif  // DICTLOG_SERVER_BLOCK_BLOCK_READER_H_
