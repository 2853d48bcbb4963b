// LogEngine's append work before the write: routing, compression of the records, and
// (block mode) sealing a large append's records straight into blocks (ADR 0021).
#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "codec/record_codec.h"
#include "common/status_macros.h"
#include "server/block/block_sealer.h"
#include "server/engine/log_engine.h"

namespace dictlog::engine {

absl::Status LogEngine::RouteBatch(absl::Span<const AppendInput> records, int64_t now_ms,
                                   const Placement* placement,
                                   std::vector<std::shared_ptr<pool::Pool>>* pools,
                                   std::vector<uint32_t>* categories, PoolBatches* batch) {
  for (size_t i = 0; i < records.size(); ++i) {
    if (i > 0 && records[i].category == records[i - 1].category) {  // A run: no lookups.
      (*pools)[i] = (*pools)[i - 1];
      (*categories)[i] = (*categories)[i - 1];
      continue;
    }
    std::shared_ptr<pool::Pool>& pool = (*pools)[i];
    ASSIGN_OR_RETURN(pool, registry_->GetOrCreate(router_.Route(records[i].category)));
    ASSIGN_OR_RETURN((*categories)[i], pool->CategoryIndex(records[i].category, *store_));
    auto [it, first] = batch->try_emplace(pool.get());
    if (!first) continue;
    if (placement != nullptr && pool->block_mode()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "pool '", pool->name(), "' is in block mode, which cluster mode does not "
          "replicate yet"));
    }
    PoolBatch& pb = it->second;
    ASSIGN_OR_RETURN(pb.encoder, pool->Encoder());
    pb.level = pool->options().compression_level();
    pb.store_raw = placement == nullptr && pb.encoder == nullptr && StoresRaw(*pool);
    pb.time_ms = NewTimeEntry(*pool, now_ms) ? now_ms : 0;
  }
  return absl::OkStatus();
}

void LogEngine::PlanOwnBlocks(absl::Span<const AppendInput> records,
                              absl::Span<const std::shared_ptr<pool::Pool>> pools,
                              PoolBatches* batch,
                              std::vector<store::RecordWrite>* writes) const {
  for (size_t i = 0; i < records.size(); ++i) {
    // Record mode, or seqs still sealed behind entry values (a store from before ADR
    // 0016 opened by a test at an older seq): only indexed blocks are written here.
    // Seqs only grow: those reserved later are at least next_seq().
    const pool::Pool& pool = *pools[i];
    if (pool.indexed_from_seq() == 0 || pool.next_seq() < pool.indexed_from_seq()) continue;
    (*batch)[pools[i].get()].members.push_back(i);
  }
  for (auto& [pool, pb] : *batch) {
    if (pb.members.empty()) continue;
    pb.block_bytes = block::BlockBytes(*pool);
    std::vector<uint64_t> sizes;
    sizes.reserve(pb.members.size());
    for (size_t i : pb.members) sizes.push_back(records[i].payload.size());
    pb.plan = block::PlanBatchBlocks(sizes, pb.block_bytes);
    pb.sealed.resize(pb.plan.size());
    for (const block::PlannedBlock& planned : pb.plan) {
      for (size_t k = planned.begin; k < planned.end; ++k) {
        (*writes)[pb.members[k]].in_block = block::Packable(sizes[k], pb.block_bytes);
      }
    }
  }
}

absl::Status LogEngine::EncodeBatch(absl::Span<const AppendInput> records,
                                    absl::Span<const std::shared_ptr<pool::Pool>> pools,
                                    absl::Span<const uint32_t> categories,
                                    const Placement* placement, PoolBatches* batch,
                                    std::vector<store::RecordWrite>* writes) {
  if (placement == nullptr) PlanOwnBlocks(records, pools, batch, writes);
  const absl::Span<const EncodedRecord> logged =
      placement != nullptr ? placement->encoded : absl::Span<const EncodedRecord>();
  // Tasks: every record (those inside a block return at once), then every block.
  struct BlockTask {
    pool::Pool* pool;
    PoolBatch* pb;
    size_t index;
    uint64_t sample_raw = 0;
    uint64_t sample_stored = 0;
  };
  std::vector<BlockTask> block_tasks;
  for (auto& [pool, pb] : *batch) {
    for (size_t b = 0; b < pb.plan.size(); ++b) block_tasks.push_back({pool, &pb, b});
  }
  uint64_t payload_bytes = 0;
  for (const AppendInput& record : records) payload_bytes += record.payload.size();
  std::vector<absl::Status> status(records.size() + block_tasks.size());
  std::vector<const PoolBatch*> pool_of(records.size());
  for (size_t i = 0; i < records.size(); ++i) {
    pool_of[i] = i > 0 && pools[i] == pools[i - 1] ? pool_of[i - 1] : &(*batch)[pools[i].get()];
  }
  auto encode_record = [&](size_t i) {
    store::RecordWrite& write = (*writes)[i];
    write.pool_id = pools[i]->id();
    write.raw_bytes = records[i].payload.size();
    write.append_unix_ms = pool_of[i]->time_ms;
    if (write.in_block) return;
    if (!logged.empty()) {  // The writer's frame, stored as it is (ADR 0020).
      status[i] = StoreEncoded(logged[i], records[i].payload, categories[i], &write);
      return;
    }
    const PoolBatch& pb = *pool_of[i];
    if (pb.store_raw) {  // Its first dictionary's re-encode compresses it.
      codec::EncodeRaw(records[i].payload, categories[i], &write.value);
      return;
    }
    codec::EncodeOptions encode;
    encode.category_index = categories[i];
    encode.dictionary = pb.encoder.get();
    encode.compression_level = pb.level;
    status[i] = codec::EncodeRecord(records[i].payload, encode, &write.value);
    if (status[i].ok() && pb.encoder != nullptr) {
      absl::StatusOr<codec::RecordView> view = codec::ParseRecord(write.value);
      if (view.ok()) write.dictionary_id = view->dictionary_id;  // 0 if stored raw.
      status[i] = view.status();
    }
  };
  auto encode_block = [&](size_t t) {
    BlockTask& task = block_tasks[t];
    status[records.size() + t] = EncodeOwnBlock(records, categories, task.pool, task.pb,
                                                task.index, &task.sample_raw,
                                                &task.sample_stored);
  };
  auto run = [&](size_t k) {
    if (k < records.size()) {
      encode_record(k);
    } else {
      encode_block(k - records.size());
    }
  };
  if (payload_bytes >= options_.parallel_encode_min_bytes) {
    encode_workers_.ParallelFor(status.size(), run);
  } else {
    for (size_t k = 0; k < status.size(); ++k) run(k);
  }
  for (const absl::Status& s : status) RETURN_IF_ERROR(s);
  for (size_t i = 0; i < records.size(); ++i) {
    if ((*writes)[i].in_block) continue;
    PoolBatch& pb = (*batch)[pools[i].get()];
    const store::RecordWrite& write = (*writes)[i];
    if (pb.store_raw) ++pb.raw_records;
    pb.added += {1, write.raw_bytes, write.value.size()};
    pb.drift_raw += write.raw_bytes;
    pb.drift_stored += write.value.size();
  }
  for (const BlockTask& task : block_tasks) {
    const store::BlockWrite& block = task.pb->sealed[task.index];
    task.pb->added += {block.records, block.raw_bytes, block.value.size()};
    task.pb->drift_raw += task.sample_raw;
    task.pb->drift_stored += task.sample_stored;
  }
  return absl::OkStatus();
}

bool LogEngine::StoresRaw(const pool::Pool& pool) const {
  if (auto_trainer_ == nullptr || !options_.recompress_first_dictionary ||
      options_.replicated_log != nullptr || pool.active_dictionary_id() != 0 ||
      pool.counters().raw_bytes >= options_.raw_before_dictionary_bytes) {
    return false;
  }
  absl::MutexLock lock(&compress_now_mu_);
  return !compress_now_.contains(pool.id());
}

absl::Status LogEngine::EncodeOwnBlock(absl::Span<const AppendInput> records,
                                       absl::Span<const uint32_t> categories,
                                       const pool::Pool* pool, PoolBatch* pb, size_t index,
                                       uint64_t* sample_raw, uint64_t* sample_stored) {
  const block::PlannedBlock planned = pb->plan[index];
  // The block's records, from its first (only seq differences are stored).
  std::vector<block::BatchRecord> part;
  part.reserve(planned.end - planned.begin);
  store::BlockWrite& block = pb->sealed[index];
  for (size_t k = planned.begin; k < planned.end; ++k) {
    const size_t i = pb->members[k];
    part.push_back({categories[i], records[i].payload});
    if (!block::Packable(records[i].payload.size(), pb->block_bytes)) continue;
    ++block.records;
    block.raw_bytes += records[i].payload.size();
  }
  block.pool_id = pool->id();
  block.first_seq = planned.begin;  // Positions; AppendValidated adds the first seq.
  block.last_seq = planned.end - 1;
  RETURN_IF_ERROR(block::EncodeBatchBlock(part, {0, part.size()}, pb->block_bytes,
                                          pb->encoder.get(), pb->level, &block.value));
  ASSIGN_OR_RETURN(const codec::RecordView view, codec::ParseRecord(block.value));
  block.dictionary_id = view.dictionary_id;
  // The drift signal measures records compressed alone: the block's first is a sample.
  if (pb->encoder == nullptr) return absl::OkStatus();
  codec::EncodeOptions encode;
  encode.category_index = part.front().category_index;
  encode.dictionary = pb->encoder.get();
  std::string sample;
  RETURN_IF_ERROR(codec::EncodeRecord(part.front().payload, encode, &sample));
  *sample_raw = part.front().payload.size();
  *sample_stored = sample.size();
  return absl::OkStatus();
}

void LogEngine::AddToTails(absl::Span<const std::shared_ptr<pool::Pool>> pools,
                           absl::Span<const store::RecordWrite> writes,
                           const PoolBatches& batch, TailAdditions* tails) {
  for (size_t i = 0; i < writes.size(); ++i) {
    if (pools[i]->indexed_from_seq() == 0 || writes[i].in_block) continue;
    const PoolBatch& pb = batch.at(pools[i].get());
    // Records before a pool's last own block are single for good (too large for a
    // block): only those after it join the tail.
    if (!pb.plan.empty() && writes[i].seq <= pb.first_seq + pb.plan.back().end - 1) continue;
    (*tails)[pools[i].get()].written.push_back({writes[i].seq, writes[i].raw_bytes});
  }
  for (const auto& [pool, pb] : batch) {
    if (!pb.plan.empty()) (*tails)[pool].sealed_own = true;
  }
}

}  // namespace dictlog::engine
