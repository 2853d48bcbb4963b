#include "server/block/block_sealer.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "codec/batch_decoder.h"
#include "codec/block_format.h"
#include "codec/record_codec.h"
#include "server/pool/pool_options.h"

namespace dictlog::block {
namespace {

constexpr size_t kRecoveryChunk = 256;

}  // namespace

uint64_t BlockBytes(const pool::Pool& pool) {
  const uint32_t bytes = pool.options().block_bytes();
  return bytes == 0 ? pool::kDefaultBlockBytes : bytes;
}

absl::Status BlockSealer::AddAndSeal(pool::Pool& pool,
                                     const std::vector<pool::BlockTail::Record>& written,
                                     std::optional<uint64_t> reserved_first,
                                     bool sealed_own) {
  const uint64_t block_bytes = BlockBytes(pool);
  std::vector<pool::BlockTail::Record> packable;
  for (const pool::BlockTail::Record& record : written) {
    if (record.raw_bytes < block_bytes) packable.push_back(record);
  }
  if (reserved_first.has_value()) {
    pool.tail().Land(*reserved_first, packable, sealed_own);
  } else {
    for (const pool::BlockTail::Record& record : packable) pool.tail().Add(record);
  }
  return SealReady(pool);
}

namespace {

// The part of `taken` (in seq order) one block may hold: records before the pool's
// first indexed seq and those after it are never sealed together. The rest goes back
// to the tail.
std::vector<pool::BlockTail::Record> OneLayout(pool::Pool& pool,
                                               std::vector<pool::BlockTail::Record> taken) {
  const uint64_t from = pool.indexed_from_seq();
  if (taken.empty() || taken.front().seq >= from) return taken;
  std::vector<pool::BlockTail::Record> later;
  while (!taken.empty() && taken.back().seq >= from) {
    later.push_back(taken.back());
    taken.pop_back();
  }
  pool.tail().Restore(later);
  return taken;
}

}  // namespace

absl::Status BlockSealer::SealReady(pool::Pool& pool) {
  absl::MutexLock lock(&pool.tail().seal_mutex());
  while (true) {
    std::vector<pool::BlockTail::Record> taken =
        OneLayout(pool, pool.tail().TakeBlock(BlockBytes(pool)));
    if (taken.empty()) return absl::OkStatus();
    absl::Status status = Seal(pool, taken);
    if (!status.ok()) {
      pool.tail().Restore(taken);
      return status;
    }
  }
}

absl::StatusOr<store::BlockSeal> BlockSealer::Pack(
    pool::Pool& pool, const std::vector<pool::BlockTail::Record>& taken) {
  std::vector<store::RecordRef> refs;
  for (const pool::BlockTail::Record& record : taken) refs.push_back({pool.id(), record.seq});
  std::vector<absl::StatusOr<std::string>> values = store_->MultiGetRecords(refs);
  store::BlockSeal seal;
  seal.pool_id = pool.id();
  seal.indexed = pool.indexed_from_seq() != 0 && taken.front().seq >= pool.indexed_from_seq();
  std::vector<codec::RecordView> views;
  for (size_t i = 0; i < taken.size(); ++i) {
    // An indexed block's records are gone from the records family once sealed.
    if (seal.indexed && absl::IsNotFound(values[i].status())) continue;
    RETURN_IF_ERROR(values[i].status());
    ASSIGN_OR_RETURN(codec::RecordView view, codec::ParseRecord(*values[i]));
    if (view.encoding == codec::Encoding::kBlockEntry) continue;  // Sealed already.
    store::BlockSeal::Entry entry;
    entry.seq = taken[i].seq;
    entry.old_stored_bytes = values[i]->size();
    entry.old_dictionary_id = view.dictionary_id;
    seal.entries.push_back(std::move(entry));
    views.push_back(view);
  }
  if (seal.entries.empty()) return seal;
  seal.first_seq = seal.entries.front().seq;
  seal.last_seq = seal.entries.back().seq;
  std::vector<absl::StatusOr<codec::DecodedRecord>> decoded =
      codec::DecodeParsedBatch(views, *dictionaries_);
  std::vector<absl::string_view> payloads;
  std::vector<codec::IndexedEntry> indexed;
  for (size_t i = 0; i < seal.entries.size(); ++i) {
    store::BlockSeal::Entry& entry = seal.entries[i];
    if (!decoded[i].ok()) {
      return absl::Status(decoded[i].status().code(),
                          absl::StrCat("sealing record ", entry.seq, " of pool ",
                                       pool.name(), ": ", decoded[i].status().message()));
    }
    entry.raw_bytes = decoded[i]->payload.size();
    if (seal.indexed) {
      indexed.push_back({entry.seq, decoded[i]->category_index, decoded[i]->payload});
    } else {
      RETURN_IF_ERROR(codec::EncodeBlockEntry(decoded[i]->category_index,
                                              entry.seq - seal.first_seq,
                                              static_cast<uint32_t>(i), &entry.value));
      payloads.push_back(decoded[i]->payload);
    }
  }
  codec::EncodeOptions encode;
  ASSIGN_OR_RETURN(std::shared_ptr<const codec::EncoderDictionary> encoder, pool.Encoder());
  encode.dictionary = encoder.get();
  encode.compression_level = pool.options().compression_level();
  encode.checksum = true;  // One wrong byte would hide in many records (ADR 0007).
  RETURN_IF_ERROR(codec::EncodeRecord(seal.indexed ? codec::EncodeIndexedBlockContent(indexed)
                                                   : codec::EncodeBlockContent(payloads),
                                      encode, &seal.value));
  ASSIGN_OR_RETURN(codec::RecordView block_view, codec::ParseRecord(seal.value));
  seal.dictionary_id = block_view.dictionary_id;
  return seal;
}

absl::Status BlockSealer::Seal(pool::Pool& pool,
                               const std::vector<pool::BlockTail::Record>& taken) {
  ASSIGN_OR_RETURN(const store::BlockSeal seal, Pack(pool, taken));
  if (seal.entries.empty()) return absl::OkStatus();
  RETURN_IF_ERROR(store_->SealBlock(seal));
  store::PoolCounters delta;
  delta.stored_bytes = seal.value.size();
  for (const store::BlockSeal::Entry& entry : seal.entries) {
    delta.stored_bytes += entry.value.size() - entry.old_stored_bytes;
  }
  pool.AddCounters(delta);
  return absl::OkStatus();
}

absl::Status BlockSealer::RecoverTail(pool::Pool& pool) {
  const uint64_t block_bytes = BlockBytes(pool);
  // Indexed blocks take the oldest tail records first and none past a pending seq:
  // the tail lies after the newest one (and the records family before it holds the
  // deletions of their records).
  uint64_t after = 0;
  if (pool.indexed_from_seq() != 0) {
    ASSIGN_OR_RETURN(after, store_->LastIndexedSeq(pool.id()));
  }
  uint64_t before = UINT64_MAX;
  size_t entry_run = 0;
  while (entry_run < kRecoveryEntryRun) {
    ASSIGN_OR_RETURN(std::vector<store::ScannedRecord> chunk,
                     store_->LatestRecords(pool.id(), before, kRecoveryChunk, after));
    for (const store::ScannedRecord& record : chunk) {
      absl::StatusOr<codec::RecordView> parsed = codec::ParseRecord(record.value);
      if (!parsed.ok()) continue;  // Corrupt: stays single; reads report DATA_LOSS.
      const codec::RecordView& view = *parsed;
      if (view.encoding == codec::Encoding::kBlockEntry) {
        if (++entry_run >= kRecoveryEntryRun) break;
        continue;
      }
      entry_run = 0;
      if (view.content_size < block_bytes) pool.tail().Add({record.seq, view.content_size});
    }
    if (chunk.size() < kRecoveryChunk) break;
    before = chunk.back().seq;
  }
  return SealReady(pool);
}

}  // namespace dictlog::block
