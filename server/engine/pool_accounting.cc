#include "server/engine/pool_accounting.h"

#include <algorithm>
#include <vector>

#include "codec/record_codec.h"
#include "common/status_macros.h"
#include "server/block/block_reader.h"

namespace dictlog::engine {
namespace {

// Indexed blocks read per store seek.
constexpr size_t kIndexedBlocksPerRead = 16;

// Sizes and dictionaries of the blocks the loaded block entries are packed in, and
// the raw size of each such record (decoded through its block).
absl::Status LoadBlocks(const store::Store& store, const codec::DictionaryLookup& lookup,
                        uint32_t pool_id, const std::vector<store::ScannedRecord>& scanned,
                        AccountedRecords* out) {
  std::vector<store::RecordRef> refs, block_refs;
  std::vector<absl::string_view> values;
  std::vector<size_t> positions;
  for (size_t i = 0; i < out->records.size(); ++i) {
    const AccountedRecord& r = out->records[i];
    if (!r.block.has_value()) continue;
    refs.push_back({pool_id, r.seq});
    values.push_back(scanned[i].value);
    positions.push_back(i);
    if (out->blocks.try_emplace(*r.block).second) block_refs.push_back({pool_id, *r.block});
  }
  std::vector<absl::StatusOr<std::string>> blocks = store.MultiGetBlocks(block_refs);
  for (size_t k = 0; k < block_refs.size(); ++k) {
    RETURN_IF_ERROR(blocks[k].status());
    ASSIGN_OR_RETURN(codec::RecordView view, codec::ParseRecord(*blocks[k]));
    out->blocks[block_refs[k].seq] = {blocks[k]->size(), view.dictionary_id};
  }
  std::vector<absl::StatusOr<codec::DecodedRecord>> decoded =
      block::DecodeStored(store, lookup, refs, values);
  for (size_t k = 0; k < positions.size(); ++k) {
    RETURN_IF_ERROR(decoded[k].status());
    out->records[positions[k]].raw_bytes = decoded[k]->payload.size();
  }
  return absl::OkStatus();
}

// The records family's part: the pool's oldest (at most `max`) records there from seq
// `from` (single values, entries of blocks found through them, the open tail).
absl::StatusOr<AccountedRecords> LoadFromRecords(const store::Store& store,
                                                 const codec::DictionaryLookup& lookup,
                                                 uint32_t pool_id, uint64_t from, size_t max) {
  ASSIGN_OR_RETURN(std::vector<store::ScannedRecord> scanned,
                   store.ScanRecords(pool_id, from, max));
  AccountedRecords out;
  for (size_t i = 0; i < scanned.size(); ++i) {
    ASSIGN_OR_RETURN(codec::RecordView view, codec::ParseRecord(scanned[i].value));
    AccountedRecord r;
    r.seq = scanned[i].seq;
    r.stored_bytes = scanned[i].value.size();
    if (view.encoding == codec::Encoding::kBlockEntry) {
      r.block = r.seq - view.block_back;
    } else {
      r.raw_bytes = view.content_size;
      r.dictionary_id = view.dictionary_id;
    }
    out.records.push_back(r);
  }
  RETURN_IF_ERROR(LoadBlocks(store, lookup, pool_id, scanned, &out));
  return out;
}

// Block mode with indexed blocks (keyed at or after `indexed_from`): the records from
// `from` on of the oldest blocks holding such seqs, until at least `max` records,
// each decoded for its records' seqs and raw sizes. A record of an indexed block has
// no stored value of its own: the block's stored size goes with its first record.
absl::Status LoadFromIndexedBlocks(const store::Store& store,
                                   const codec::DictionaryLookup& lookup, uint32_t pool_id,
                                   uint64_t indexed_from, uint64_t from, size_t max,
                                   AccountedRecords* out) {
  const uint64_t first = from;
  size_t loaded = 0;
  while (loaded < max) {
    ASSIGN_OR_RETURN(std::vector<store::IndexedBlock> blocks,
                     store.ScanIndexedBlocks(pool_id, indexed_from, from,
                                             kIndexedBlocksPerRead));
    for (const store::IndexedBlock& block : blocks) {
      ASSIGN_OR_RETURN(codec::RecordView view, codec::ParseRecord(block.value));
      ASSIGN_OR_RETURN(block::IndexedContent content,
                       block::DecodeIndexedBlock(lookup, block));
      out->blocks[block.first_seq] = {block.value.size(), view.dictionary_id};
      for (const codec::IndexedEntry& entry : content.entries) {
        if (entry.seq < first) continue;  // The block holding `from` started before it.
        AccountedRecord r;
        r.seq = entry.seq;
        r.raw_bytes = entry.payload.size();
        r.block = block.first_seq;
        out->records.push_back(r);
      }
      loaded += content.entries.size();  // Bounds the blocks read, not the records kept.
      from = block.last_seq + 1;
    }
    if (blocks.size() < kIndexedBlocksPerRead) break;
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<AccountedRecords> LoadAccountedRecords(const store::Store& store,
                                                      const codec::DictionaryLookup& lookup,
                                                      const pool::Pool& pool, uint64_t from,
                                                      size_t max) {
  ASSIGN_OR_RETURN(AccountedRecords out, LoadFromRecords(store, lookup, pool.id(), from, max));
  if (pool.indexed_from_seq() != 0) {
    // A seq is in the records family or in an indexed block, never both (sealing
    // deletes the values): the first `max` of both lists are the pool's oldest.
    RETURN_IF_ERROR(LoadFromIndexedBlocks(store, lookup, pool.id(), pool.indexed_from_seq(),
                                          from, max, &out));
    std::sort(out.records.begin(), out.records.end(),
              [](const AccountedRecord& a, const AccountedRecord& b) { return a.seq < b.seq; });
    if (out.records.size() > max) out.records.resize(max);
  }
  return out;
}

Counted CountBelow(const AccountedRecords& loaded, uint64_t end) {
  Counted counted;
  for (const AccountedRecord& r : loaded.records) {
    if (r.seq >= end) break;
    counted.pool += {1, r.raw_bytes, r.stored_bytes};
    if (!r.block.has_value()) {
      if (r.dictionary_id != 0) {
        counted.dictionaries[r.dictionary_id] += {1, r.raw_bytes, r.stored_bytes};
      }
      continue;
    }
    const AccountedBlock& block = loaded.blocks.at(*r.block);
    store::PoolCounters d{1, r.raw_bytes, 0};
    if (*r.block == r.seq) {  // The block counts with its first record.
      counted.pool.stored_bytes += block.stored_bytes;
      d.stored_bytes = block.stored_bytes;
    }
    if (block.dictionary_id != 0) counted.dictionaries[block.dictionary_id] += d;
  }
  return counted;
}

absl::StatusOr<Counted> CountPool(const store::Store& store,
                                  const codec::DictionaryLookup& lookup,
                                  const pool::Pool& pool, size_t chunk) {
  Counted total;
  uint64_t from = std::max<uint64_t>(pool.retained_from(), 1);
  while (true) {
    ASSIGN_OR_RETURN(AccountedRecords loaded,
                     LoadAccountedRecords(store, lookup, pool, from, std::max<size_t>(chunk, 1)));
    if (loaded.records.empty()) return total;
    const Counted counted = CountBelow(loaded, UINT64_MAX);
    total.pool += counted.pool;
    for (const auto& [id, counters] : counted.dictionaries) total.dictionaries[id] += counters;
    from = loaded.records.back().seq + 1;
  }
}

}  // namespace dictlog::engine
