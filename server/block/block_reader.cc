#include "server/block/block_reader.h"

#include <optional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "codec/batch_decoder.h"
#include "codec/block_format.h"

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

  bool empty() const { return keys_.empty(); }

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

  // The payload size of entry `view.block_entry` of block `index`.
  absl::StatusOr<uint64_t> EntrySize(size_t index, const codec::RecordView& view) const {
    ASSIGN_OR_RETURN(absl::string_view payload, Payload(index, view));
    return payload.size();
  }

  // Entry `entry` of block `index`, with the entry's category.
  absl::StatusOr<DecodedRecord> Entry(size_t index, const codec::RecordView& view) const {
    ASSIGN_OR_RETURN(absl::string_view payload, Payload(index, view));
    DecodedRecord record;
    record.category_index = view.category_index;
    record.payload.assign(payload.data(), payload.size());
    return record;
  }

 private:
  absl::StatusOr<absl::string_view> Payload(size_t index,
                                            const codec::RecordView& view) const {
    const absl::StatusOr<Block>& block = blocks_[index];
    if (!block.ok()) return block.status();
    if (view.block_entry >= block->payloads.size()) {
      return absl::DataLossError(absl::StrCat("its block has ", block->payloads.size(),
                                              " entries, not entry ", view.block_entry));
    }
    return block->payloads[view.block_entry];
  }

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
    absl::Span<const store::RecordRef> refs, absl::Span<const absl::string_view> values,
    ByteBudget* budget) {
  std::vector<absl::StatusOr<DecodedRecord>> results(values.size(),
                                                     absl::UnknownError("not decoded"));
  // What each value is: a single record (decoded alone) or a block entry.
  struct Parsed {
    codec::RecordView view;
    bool entry = false;
    size_t block = 0;
  };
  std::vector<std::optional<Parsed>> parsed(values.size());
  BlockSet blocks;
  for (size_t i = 0; i < values.size(); ++i) {
    absl::StatusOr<codec::RecordView> view = codec::ParseRecord(values[i]);
    if (!view.ok()) {
      results[i] = view.status();
    } else if (view->encoding != codec::Encoding::kBlockEntry) {
      parsed[i] = Parsed{*view};
    } else if (view->block_back >= refs[i].seq) {
      results[i] = absl::DataLossError("stored block entry points before its pool");
    } else {
      const size_t block = blocks.Add({refs[i].pool_id, refs[i].seq - view->block_back});
      parsed[i] = Parsed{*view, true, block};
    }
  }
  // Blocks are small (their entries are under the pool's block_bytes, at most 64 KiB):
  // they are decoded to learn their entries' sizes.
  if (!blocks.empty()) blocks.Load(store, dictionaries);
  std::vector<codec::RecordView> singles;
  std::vector<size_t> single_positions;
  for (size_t i = 0; i < values.size(); ++i) {
    if (!parsed[i].has_value()) continue;
    const Parsed& p = *parsed[i];
    absl::StatusOr<uint64_t> size =
        p.entry ? blocks.EntrySize(p.block, p.view) : p.view.content_size;
    if (!size.ok()) {
      results[i] = size.status();
    } else if (budget != nullptr && !budget->Take(*size)) {
      results[i] = budget->ExhaustedError();
    } else if (p.entry) {
      results[i] = blocks.Entry(p.block, p.view);
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
    if (view->encoding == codec::Encoding::kZstdFrame && view->dictionary_id != 0) {
      dictionary = dictionaries.Find(view->dictionary_id);
    }
    return codec::DecodeParsed(*view, dictionary.get());
  }
  return std::move(DecodeStored(store, dictionaries, {&ref, 1}, {&value, 1})[0]);
}

}  // namespace dictlog::block
