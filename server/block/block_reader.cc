#include "server/block/block_reader.h"

#include <algorithm>
#include <map>
#include <optional>
#include <utility>
#include <variant>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "codec/batch_decoder.h"
#include "codec/block_format.h"

namespace dictlog::block {
namespace {

using codec::DecodedRecord;

// The entries of an indexed block's decoded content; DATA_LOSS if they disagree with
// the block's key.
absl::StatusOr<std::vector<codec::IndexedEntry>> ParseIndexed(
    absl::string_view content, const store::IndexedBlock& block) {
  ASSIGN_OR_RETURN(std::vector<codec::IndexedEntry> entries,
                   codec::ParseIndexedBlockContent(content, block.first_seq));
  if (entries.back().seq != block.last_seq) {
    return absl::DataLossError(absl::StrCat("indexed block ", block.first_seq, "..",
                                            block.last_seq, " ends at seq ",
                                            entries.back().seq));
  }
  return entries;
}

// The distinct blocks a call needs, each read and decoded once: blocks found through
// entry values (read by key) and indexed blocks (found by the store's seek, values
// given).
class BlockSet {
 public:
  // The index of the block keyed (pool_id, first_seq), added if new.
  size_t Add(store::RecordRef key) {
    auto [it, added] = index_.try_emplace(std::make_pair(key.pool_id, key.seq), keys_.size());
    if (added) {
      keys_.push_back(key);
      sources_.emplace_back();
    }
    return it->second;
  }

  // The index of indexed block `block` of pool `pool_id`, added if new.
  size_t AddIndexed(uint32_t pool_id, store::IndexedBlock block) {
    const size_t index = Add({pool_id, block.first_seq});
    if (std::holds_alternative<ByKey>(sources_[index])) sources_[index] = std::move(block);
    return index;
  }

  // The index of an indexed block of pool `pool_id` found decoded in the cache, keyed
  // by its first entry's seq; added if new.
  size_t AddCached(uint32_t pool_id, std::shared_ptr<const IndexedContent> content) {
    const size_t index = Add({pool_id, content->entries.front().seq});
    if (std::holds_alternative<ByKey>(sources_[index])) sources_[index] = std::move(content);
    return index;
  }

  bool empty() const { return keys_.empty(); }

  // Reads and decodes every block not found in the cache; offers the indexed ones
  // read from the store to `cache` (may be null).
  void Load(const store::Store& store, const codec::DictionaryLookup& dictionaries,
            DecodedBlockCache* cache) {
    std::vector<store::RecordRef> unread;
    std::vector<size_t> unread_positions;
    for (size_t i = 0; i < keys_.size(); ++i) {
      if (!std::holds_alternative<ByKey>(sources_[i])) continue;
      unread.push_back(keys_[i]);
      unread_positions.push_back(i);
    }
    std::vector<absl::StatusOr<std::string>> values = store.MultiGetBlocks(unread);
    std::vector<absl::string_view> found;
    std::vector<size_t> positions;
    blocks_.clear();  // Blocks own their content: not copyable.
    const absl::Status not_read = absl::UnknownError("not read");  // Shared: one message.
    for (size_t i = 0; i < keys_.size(); ++i) {
      if (const auto* cached = std::get_if<Cached>(&sources_[i])) {
        Block block;
        block.indexed = *cached;
        blocks_.emplace_back(std::move(block));
      } else {
        blocks_.emplace_back(not_read);
      }
    }
    for (size_t k = 0; k < unread.size(); ++k) {
      const size_t i = unread_positions[k];
      if (values[k].ok()) {
        found.push_back(*values[k]);
        positions.push_back(i);
      } else if (absl::IsNotFound(values[k].status())) {
        blocks_[i] = absl::DataLossError(absl::StrCat(
            "its block (pool id ", keys_[i].pool_id, ", seq ", keys_[i].seq,
            ") is missing"));
      } else {
        blocks_[i] = values[k].status();
      }
    }
    for (size_t i = 0; i < keys_.size(); ++i) {
      if (const auto* indexed = std::get_if<store::IndexedBlock>(&sources_[i])) {
        found.push_back(indexed->value);
        positions.push_back(i);
      }
    }
    std::vector<absl::StatusOr<DecodedRecord>> decoded =
        codec::DecodeBatch(found, dictionaries);
    for (size_t k = 0; k < found.size(); ++k) {
      const size_t i = positions[k];
      const auto* indexed = std::get_if<store::IndexedBlock>(&sources_[i]);
      blocks_[i] = Parse(std::move(decoded[k]), indexed);
      if (cache != nullptr && indexed != nullptr && blocks_[i].ok()) {
        cache->Offer(keys_[i].pool_id, indexed->first_seq, indexed->last_seq,
                     blocks_[i]->indexed);
      }
    }
  }

  // The payload size of the record `view` (an entry value) or `seq` (an indexed block's
  // record) names in block `index`.
  absl::StatusOr<uint64_t> EntrySize(size_t index, const codec::RecordView& view,
                                     uint64_t seq) const {
    ASSIGN_OR_RETURN(const Found found, Find(index, view, seq));
    return found.payload.size();
  }

  // That record, with its category.
  absl::StatusOr<DecodedRecord> Entry(size_t index, const codec::RecordView& view,
                                      uint64_t seq) const {
    ASSIGN_OR_RETURN(const Found found, Find(index, view, seq));
    DecodedRecord record;
    record.category_index = found.category_index;
    record.payload.assign(found.payload.data(), found.payload.size());
    return record;
  }

 private:
  struct Found {
    absl::string_view payload;
    uint32_t category_index = 0;
  };

  absl::StatusOr<Found> Find(size_t index, const codec::RecordView& view,
                             uint64_t seq) const {
    const absl::StatusOr<Block>& block = blocks_[index];
    if (!block.ok()) return block.status();
    if (block->indexed != nullptr) {
      const std::vector<codec::IndexedEntry>& entries = block->indexed->entries;
      auto it = std::lower_bound(
          entries.begin(), entries.end(), seq,
          [](const codec::IndexedEntry& e, uint64_t s) { return e.seq < s; });
      if (it == entries.end() || it->seq != seq) {
        return absl::NotFoundError("no such record");  // A gap in the block's seqs.
      }
      return Found{it->payload, it->category_index};
    }
    if (view.block_entry >= block->payloads.size()) {
      return absl::DataLossError(absl::StrCat("its block has ", block->payloads.size(),
                                              " entries, not entry ", view.block_entry));
    }
    return Found{block->payloads[view.block_entry], view.category_index};
  }

  struct Block {
    std::unique_ptr<std::string> content;         // Entry-value blocks.
    std::vector<absl::string_view> payloads;      // Into content.
    std::shared_ptr<const IndexedContent> indexed;  // Indexed blocks (maybe cached).
  };

  static absl::StatusOr<Block> Parse(absl::StatusOr<DecodedRecord> decoded,
                                     const store::IndexedBlock* indexed) {
    if (!decoded.ok()) {
      return absl::Status(decoded.status().code(),
                          absl::StrCat("its block: ", decoded.status().message()));
    }
    Block block;
    if (indexed != nullptr) {
      auto content = std::make_shared<IndexedContent>();
      content->content = std::make_unique<std::string>(std::move(decoded->payload));
      ASSIGN_OR_RETURN(content->entries, ParseIndexed(*content->content, *indexed));
      block.indexed = std::move(content);
      return block;
    }
    block.content = std::make_unique<std::string>(std::move(decoded->payload));
    ASSIGN_OR_RETURN(block.payloads, codec::ParseBlockContent(*block.content));
    return block;
  }

  std::vector<store::RecordRef> keys_;
  // Where each key's block comes from: read by key (an entry-value block), found by the
  // store's seek (an indexed block, value given), or found decoded in the cache.
  struct ByKey {};
  using Cached = std::shared_ptr<const IndexedContent>;
  std::vector<std::variant<ByKey, store::IndexedBlock, Cached>> sources_;  // Per key.
  absl::flat_hash_map<std::pair<uint32_t, uint64_t>, size_t> index_;
  std::vector<absl::StatusOr<Block>> blocks_;
};

}  // namespace

namespace {

// What a value to decode is: a single record (decoded alone), a block entry, or a
// record of an indexed block (`seq`).
struct Parsed {
  codec::RecordView view;
  bool in_block = false;
  size_t block = 0;
  uint64_t seq = 0;
};

// Finds the indexed blocks of the records absent from the records family (those with
// indexed_from[i] != 0), one seek per record, grouped by pool; adds them to `blocks`.
void FindIndexed(const store::Store& store, absl::Span<const store::RecordRef> refs,
                 absl::Span<const uint64_t> indexed_from, DecodedBlockCache* cache,
                 BlockSet* blocks, std::vector<std::optional<Parsed>>* parsed,
                 std::vector<absl::StatusOr<DecodedRecord>>* results) {
  // (pool, indexed_from) -> the positions of its records the cache does not hold.
  std::map<std::pair<uint32_t, uint64_t>, std::vector<size_t>> by_pool;
  for (size_t i = 0; i < indexed_from.size(); ++i) {
    if (indexed_from[i] == 0) continue;
    if (cache != nullptr) {
      if (std::shared_ptr<const IndexedContent> content = cache->Find(refs[i].pool_id, refs[i].seq);
          content != nullptr) {
        Parsed p;
        p.in_block = true;
        p.seq = refs[i].seq;
        p.block = blocks->AddCached(refs[i].pool_id, std::move(content));
        (*parsed)[i] = p;
        continue;
      }
    }
    by_pool[{refs[i].pool_id, indexed_from[i]}].push_back(i);
  }
  for (const auto& [pool, positions] : by_pool) {
    std::vector<uint64_t> seqs;
    for (size_t i : positions) seqs.push_back(refs[i].seq);
    absl::StatusOr<store::IndexedBlockSearch> search =
        store.FindIndexedBlocks(pool.first, pool.second, seqs);
    for (size_t k = 0; k < positions.size(); ++k) {
      const size_t i = positions[k];
      if (!search.ok()) {
        (*results)[i] = search.status();
      } else if (search->Absent(k)) {
        (*results)[i] = absl::NotFoundError("no such record");
      } else if (search->block_of[k] < 0) {
        (*results)[i] = search->failed[k];
      } else {
        Parsed p;
        p.in_block = true;
        p.seq = refs[i].seq;
        p.block = blocks->AddIndexed(pool.first, search->blocks[search->block_of[k]]);
        (*parsed)[i] = p;
      }
    }
  }
}

}  // namespace

std::vector<absl::StatusOr<DecodedRecord>> DecodeStored(
    const store::Store& store, const codec::DictionaryLookup& dictionaries,
    absl::Span<const store::RecordRef> refs, absl::Span<const absl::string_view> values,
    ByteBudget* budget, absl::Span<const uint64_t> indexed_from, DecodedBlockCache* cache) {
  std::vector<absl::StatusOr<DecodedRecord>> results(values.size(),
                                                     absl::UnknownError("not decoded"));
  std::vector<std::optional<Parsed>> parsed(values.size());
  BlockSet blocks;
  for (size_t i = 0; i < values.size(); ++i) {
    if (!indexed_from.empty() && indexed_from[i] != 0) continue;  // FindIndexed's.
    absl::StatusOr<codec::RecordView> view = codec::ParseRecord(values[i]);
    if (!view.ok()) {
      results[i] = view.status();
    } else if (view->encoding != codec::Encoding::kBlockEntry) {
      parsed[i] = Parsed{*view};
    } else if (view->block_back >= refs[i].seq) {
      results[i] = absl::DataLossError("stored block entry points before its pool");
    } else {
      const size_t block = blocks.Add({refs[i].pool_id, refs[i].seq - view->block_back});
      parsed[i] = Parsed{*view, true, block, refs[i].seq};
    }
  }
  if (!indexed_from.empty()) {
    FindIndexed(store, refs, indexed_from, cache, &blocks, &parsed, &results);
  }
  // Blocks are small (their entries are under the pool's block_bytes, at most 64 KiB):
  // they are decoded to learn their entries' sizes.
  if (!blocks.empty()) blocks.Load(store, dictionaries, cache);
  std::vector<codec::RecordView> singles;
  std::vector<size_t> single_positions;
  for (size_t i = 0; i < values.size(); ++i) {
    if (!parsed[i].has_value()) continue;
    const Parsed& p = *parsed[i];
    absl::StatusOr<uint64_t> size =
        p.in_block ? blocks.EntrySize(p.block, p.view, p.seq) : p.view.content_size;
    if (!size.ok()) {
      results[i] = size.status();
    } else if (budget != nullptr && !budget->Take(*size)) {
      results[i] = budget->ExhaustedError();
    } else if (p.in_block) {
      results[i] = blocks.Entry(p.block, p.view, p.seq);
    } else {
      singles.push_back(p.view);
      single_positions.push_back(i);
    }
  }
  std::vector<absl::StatusOr<DecodedRecord>> decoded =
      codec::DecodeParsedBatch(singles, dictionaries);
  for (size_t k = 0; k < singles.size(); ++k) {
    results[single_positions[k]] = std::move(decoded[k]);
  }
  return results;
}

std::vector<absl::StatusOr<DecodedRecord>> DecodeScanned(
    const store::Store& store, const codec::DictionaryLookup& dictionaries,
    uint32_t pool_id, absl::Span<const store::ScannedRecord> records) {
  std::vector<store::RecordRef> refs;
  std::vector<absl::string_view> values;
  for (const store::ScannedRecord& record : records) {
    refs.push_back({pool_id, record.seq});
    values.push_back(record.value);
  }
  return DecodeStored(store, dictionaries, refs, values);
}

absl::StatusOr<DecodedRecord> DecodeOne(const store::Store& store,
                                        const codec::DictionaryLookup& dictionaries,
                                        store::RecordRef ref, absl::string_view value) {
  // A single record (the common case) decodes without the batch machinery.
  if (absl::StatusOr<codec::RecordView> view = codec::ParseRecord(value);
      view.ok() && view->encoding != codec::Encoding::kBlockEntry) {
    std::shared_ptr<const codec::DecoderDictionary> dictionary;
    if (view->framed() && view->dictionary_id != 0) {
      dictionary = dictionaries.Find(view->dictionary_id);
    }
    return codec::DecodeParsed(*view, dictionary.get());
  }
  return std::move(DecodeStored(store, dictionaries, {&ref, 1}, {&value, 1})[0]);
}

absl::StatusOr<IndexedContent> DecodeIndexedBlock(const codec::DictionaryLookup& dictionaries,
                                                  const store::IndexedBlock& block) {
  absl::StatusOr<DecodedRecord> decoded = codec::DecodeRecord(block.value, dictionaries);
  if (!decoded.ok()) {
    return absl::Status(decoded.status().code(),
                        absl::StrCat("indexed block ", block.first_seq, "..",
                                     block.last_seq, ": ", decoded.status().message()));
  }
  IndexedContent out;
  out.content = std::make_unique<std::string>(std::move(decoded->payload));
  ASSIGN_OR_RETURN(out.entries, ParseIndexed(*out.content, block));
  return out;
}

namespace {

// `records` (seq order) and the indexed block's entries from `from_seq` to `last_seq`,
// merged in seq order; what comes after `last_seq` is left for the next call.
std::vector<store::ScannedRecord> MergeBlock(std::vector<store::ScannedRecord> records,
                                             const IndexedContent& block, uint64_t from_seq,
                                             uint64_t last_seq, size_t max_records) {
  std::vector<store::ScannedRecord> out;
  auto next = records.begin();
  for (const codec::IndexedEntry& entry : block.entries) {
    if (entry.seq < from_seq) continue;
    if (entry.seq > last_seq) break;
    for (; next != records.end() && next->seq < entry.seq; ++next) {
      out.push_back(std::move(*next));
    }
    store::ScannedRecord record;
    record.seq = entry.seq;
    codec::EncodeRaw(entry.payload, entry.category_index, &record.value);
    out.push_back(std::move(record));
  }
  for (; next != records.end() && next->seq <= last_seq; ++next) {
    out.push_back(std::move(*next));
  }
  if (out.size() > max_records) out.resize(max_records);
  return out;
}

}  // namespace

absl::StatusOr<std::vector<store::ScannedRecord>> ScanPool(
    const store::Store& store, const codec::DictionaryLookup& dictionaries,
    uint32_t pool_id, uint64_t indexed_from, uint64_t from_seq, size_t max_records,
    size_t max_bytes, const store::ReadSnapshot* snapshot) {
  if (indexed_from == 0) return store.ScanRecords(pool_id, from_seq, max_records, max_bytes);
  // A seal between the two reads would move records from the second's family to the
  // first's after the first had looked: both read one moment.
  std::unique_ptr<store::ReadSnapshot> own;
  if (snapshot == nullptr) {
    own = store.Snapshot();
    snapshot = own.get();
  }
  ASSIGN_OR_RETURN(std::vector<store::IndexedBlock> blocks,
                   store.ScanIndexedBlocks(pool_id, indexed_from, from_seq, 1, snapshot));
  if (blocks.empty()) {
    return store.ScanRecords(pool_id, from_seq, max_records, max_bytes, UINT64_MAX, snapshot);
  }
  // Not past the block: the records family holds only deletions of its records
  // there, and of the blocks after it (walking them would cost a pass per call).
  ASSIGN_OR_RETURN(std::vector<store::ScannedRecord> records,
                   store.ScanRecords(pool_id, from_seq, max_records, max_bytes,
                                     blocks[0].last_seq + 1, snapshot));
  size_t bytes = 0;
  for (const store::ScannedRecord& record : records) bytes += record.value.size();
  const bool more_records = records.size() >= max_records || bytes >= max_bytes;
  // The records read all come before the block: it waits for the next call.
  if (more_records && records.back().seq < blocks[0].first_seq) return records;
  ASSIGN_OR_RETURN(const IndexedContent block, DecodeIndexedBlock(dictionaries, blocks[0]));
  // Records not read yet may lie inside the block's range: stop at the last one read.
  const uint64_t last_seq =
      more_records ? std::min(records.back().seq, blocks[0].last_seq) : blocks[0].last_seq;
  return MergeBlock(std::move(records), block, from_seq, last_seq, max_records);
}

}  // namespace dictlog::block
