#include "server/block/block_reader.h"

#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "server/codec/batch_decoder.h"
#include "server/codec/block_format.h"

namespace dictlog::block {
namespace {

using codec::DecodedRecord;

// The distinct blocks a call needs, each read and decoded once.
class BlockSet {
 public:
  // The index of the block keyed (pool_id, first_seq), added if new.
  size_t Add(store::RecordRef key) {
    auto [it, added] = index_.try_emplace(std::make_pair(key.pool_id, key.seq), keys_.size());
    if (added) keys_.push_back(key);
    return it->second;
  }

  // Reads and decodes every block.
  void Load(const store::Store& store, const codec::DictionaryLookup& dictionaries) {
    std::vector<absl::StatusOr<std::string>> values = store.MultiGetBlocks(keys_);
    std::vector<absl::string_view> found;
    std::vector<size_t> positions;
    blocks_.assign(keys_.size(), absl::UnknownError("not read"));
    for (size_t i = 0; i < keys_.size(); ++i) {
      if (values[i].ok()) {
        found.push_back(*values[i]);
        positions.push_back(i);
      } else if (absl::IsNotFound(values[i].status())) {
        blocks_[i] = absl::DataLossError(absl::StrCat(
            "its block (pool id ", keys_[i].pool_id, ", seq ", keys_[i].seq,
            ") is missing"));
      } else {
        blocks_[i] = values[i].status();
      }
    }
    std::vector<absl::StatusOr<DecodedRecord>> decoded =
        codec::DecodeBatch(found, dictionaries);
    for (size_t k = 0; k < found.size(); ++k) {
      blocks_[positions[k]] = Parse(std::move(decoded[k]));
    }
  }

  // Entry `entry` of block `index`, with the entry's category.
  absl::StatusOr<DecodedRecord> Entry(size_t index, const codec::RecordView& view) const {
    const absl::StatusOr<Block>& block = blocks_[index];
    if (!block.ok()) return block.status();
    if (view.block_entry >= block->payloads.size()) {
      return absl::DataLossError(absl::StrCat("its block has ", block->payloads.size(),
                                              " entries, not entry ", view.block_entry));
    }
    DecodedRecord record;
    record.category_index = view.category_index;
    const absl::string_view payload = block->payloads[view.block_entry];
    record.payload.assign(payload.data(), payload.size());
    return record;
  }

 private:
  struct Block {
    std::string content;
    std::vector<absl::string_view> payloads;  // Into content.
  };

  static absl::StatusOr<Block> Parse(absl::StatusOr<DecodedRecord> decoded) {
    if (!decoded.ok()) {
      return absl::Status(decoded.status().code(),
                          absl::StrCat("its block: ", decoded.status().message()));
    }
    Block block;
    block.content = std::move(decoded->payload);
    absl::StatusOr<std::vector<absl::string_view>> payloads =
        codec::ParseBlockContent(block.content);
    if (!payloads.ok()) return payloads.status();
    block.payloads = *std::move(payloads);
    return block;
  }

  std::vector<store::RecordRef> keys_;
  absl::flat_hash_map<std::pair<uint32_t, uint64_t>, size_t> index_;
  std::vector<absl::StatusOr<Block>> blocks_;
};

}  // namespace

std::vector<absl::StatusOr<DecodedRecord>> DecodeStored(
    const store::Store& store, const codec::DictionaryLookup& dictionaries,
    absl::Span<const store::RecordRef> refs, absl::Span<const absl::string_view> values) {
  std::vector<absl::StatusOr<DecodedRecord>> results(values.size(),
                                                     absl::UnknownError("not decoded"));
  std::vector<codec::RecordView> singles;
  std::vector<size_t> single_positions;
  struct PendingEntry {
    size_t position;
    size_t block;
    codec::RecordView view;
  };
  std::vector<PendingEntry> entries;
  BlockSet blocks;
  for (size_t i = 0; i < values.size(); ++i) {
    absl::StatusOr<codec::RecordView> view = codec::ParseRecord(values[i]);
    if (!view.ok()) {
      results[i] = view.status();
    } else if (view->encoding != codec::Encoding::kBlockEntry) {
      singles.push_back(*view);
      single_positions.push_back(i);
    } else if (view->block_back >= refs[i].seq) {
      results[i] = absl::DataLossError("stored block entry points before its pool");
    } else {
      const size_t block = blocks.Add({refs[i].pool_id, refs[i].seq - view->block_back});
      entries.push_back({i, block, *view});
    }
  }
  std::vector<absl::StatusOr<DecodedRecord>> decoded =
      codec::DecodeParsedBatch(singles, dictionaries);
  for (size_t k = 0; k < singles.size(); ++k) {
    results[single_positions[k]] = std::move(decoded[k]);
  }
  if (entries.empty()) return results;
  blocks.Load(store, dictionaries);
  for (const PendingEntry& entry : entries) {
    results[entry.position] = blocks.Entry(entry.block, entry.view);
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
    if (view->encoding == codec::Encoding::kZstdFrame && view->dictionary_id != 0) {
      dictionary = dictionaries.Find(view->dictionary_id);
    }
    return codec::DecodeParsed(*view, dictionary.get());
  }
  return std::move(DecodeStored(store, dictionaries, {&ref, 1}, {&value, 1})[0]);
}

}  // namespace dictlog::block
