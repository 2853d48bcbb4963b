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
                                     const std::vector<pool::BlockTail::Record>& written) {
  const uint64_t block_bytes = BlockBytes(pool);
  for (const pool::BlockTail::Record& record : written) {
    if (record.raw_bytes < block_bytes) pool.tail().Add(record);
  }
  return SealReady(pool);
}

absl::Status BlockSealer::SealReady(pool::Pool& pool) {
  absl::MutexLock lock(&pool.tail().seal_mutex());
  while (true) {
    std::vector<pool::BlockTail::Record> taken = pool.tail().TakeBlock(BlockBytes(pool));
    if (taken.empty()) return absl::OkStatus();
    absl::Status status = Seal(pool, taken);
    if (!status.ok()) {
      pool.tail().Restore(taken);
      return status;
    }
  }
}

absl::Status BlockSealer::Seal(pool::Pool& pool,
                               const std::vector<pool::BlockTail::Record>& taken) {
  std::vector<store::RecordRef> refs;
  for (const pool::BlockTail::Record& record : taken) refs.push_back({pool.id(), record.seq});
  std::vector<absl::StatusOr<std::string>> values = store_->MultiGetRecords(refs);
  std::vector<uint64_t> seqs;  // Of the records still single, in seq order.
  std::vector<codec::RecordView> views;
  std::vector<size_t> stored_bytes;
  for (size_t i = 0; i < taken.size(); ++i) {
    RETURN_IF_ERROR(values[i].status());
    ASSIGN_OR_RETURN(codec::RecordView view, codec::ParseRecord(*values[i]));
    if (view.encoding == codec::Encoding::kBlockEntry) continue;  // Sealed already.
    seqs.push_back(taken[i].seq);
    views.push_back(view);
    stored_bytes.push_back(values[i]->size());
  }
  if (seqs.empty()) return absl::OkStatus();
  std::vector<absl::StatusOr<codec::DecodedRecord>> decoded =
      codec::DecodeParsedBatch(views, *dictionaries_);
  store::BlockSeal seal;
  seal.pool_id = pool.id();
  seal.first_seq = seqs.front();
  std::vector<absl::string_view> payloads;
  for (size_t i = 0; i < seqs.size(); ++i) {
    if (!decoded[i].ok()) {
      return absl::Status(decoded[i].status().code(),
                          absl::StrCat("sealing record ", seqs[i], " of pool ",
                                       pool.name(), ": ", decoded[i].status().message()));
    }
    store::BlockSeal::Entry entry;
    entry.seq = seqs[i];
    entry.raw_bytes = decoded[i]->payload.size();
    entry.old_stored_bytes = stored_bytes[i];
    entry.old_dictionary_id = views[i].dictionary_id;
    RETURN_IF_ERROR(codec::EncodeBlockEntry(decoded[i]->category_index,
                                            entry.seq - seal.first_seq,
                                            static_cast<uint32_t>(i), &entry.value));
    seal.entries.push_back(std::move(entry));
    payloads.push_back(decoded[i]->payload);
  }
  codec::EncodeOptions encode;
  ASSIGN_OR_RETURN(std::shared_ptr<const codec::EncoderDictionary> encoder, pool.Encoder());
  encode.dictionary = encoder.get();
  encode.compression_level = pool.options().compression_level();
  encode.checksum = true;  // One wrong byte would hide in many records (ADR 0007).
  RETURN_IF_ERROR(codec::EncodeRecord(codec::EncodeBlockContent(payloads), encode, &seal.value));
  ASSIGN_OR_RETURN(codec::RecordView block_view, codec::ParseRecord(seal.value));
  seal.dictionary_id = block_view.dictionary_id;
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
  uint64_t before = UINT64_MAX;
  size_t entry_run = 0;
  while (entry_run < kRecoveryEntryRun) {
    ASSIGN_OR_RETURN(std::vector<store::ScannedRecord> chunk,
                     store_->LatestRecords(pool.id(), before, kRecoveryChunk));
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
