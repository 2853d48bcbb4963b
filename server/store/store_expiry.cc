// Store's retention writes (ADR 0015): a pool's oldest records go in one batch of range
// deletions, counter merges and its catalog entry; a compaction of the ranges then
// gives the space back.
#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "codec/varint.h"
#include "common/status_macros.h"
#include "server/store/keys.h"
#include "server/store/rocksdb_status.h"
#include "server/store/store.h"

namespace dictlog::store {
namespace {

rocksdb::Slice ToSlice(absl::string_view s) { return rocksdb::Slice(s.data(), s.size()); }

// Adds a merge that subtracts `counters` under `key`.
absl::Status BatchSubtract(rocksdb::ColumnFamilyHandle* family, const std::string& key,
                           const PoolCounters& counters, rocksdb::WriteBatch* batch) {
  PoolCounters delta;
  delta -= counters;
  return FromRocks(batch->Merge(family, key, EncodePoolCounters(delta)),
                   "batching counters");
}

}  // namespace

absl::Status Store::ExpireRecords(const Expiry& expiry) {
  const std::string begin = RecordKey(expiry.pool_id, 0);
  const std::string end = RecordKey(expiry.pool_id, expiry.end_seq);
  // The time entry covering the first record kept moves to its seq (the range takes
  // the entry at or before it).
  ASSIGN_OR_RETURN(std::vector<std::optional<int64_t>> kept,
                   AppendTimes({RecordRef{expiry.pool_id, expiry.end_seq}}));
  rocksdb::WriteBatch batch;
  // [RecordKey(pool, 0), RecordKey(pool, end)) holds the pool's indexed block keys
  // (pool, first, last) with first < end too: a 12-byte key sorts before its extensions.
  for (rocksdb::ColumnFamilyHandle* family : {records_, blocks_, times_}) {
    RETURN_IF_ERROR(FromRocks(batch.DeleteRange(family, ToSlice(begin), ToSlice(end)),
                              "batching a range deletion"));
  }
  if (kept[0].has_value()) {
    std::string value;
    codec::PutVarint64(static_cast<uint64_t>(*kept[0]), &value);
    RETURN_IF_ERROR(FromRocks(batch.Put(times_, ToSlice(end), value),
                              "batching an append time"));
  }
  RETURN_IF_ERROR(
      BatchSubtract(counters_, CounterKey(expiry.pool_id), expiry.pool_counters, &batch));
  for (const auto& [id, counters] : expiry.dictionary_counters) {
    RETURN_IF_ERROR(BatchSubtract(counters_, DictionaryCounterKey(id), counters, &batch));
  }
  RETURN_IF_ERROR(FromRocks(batch.Put(catalog_, PoolKey(expiry.record.name()),
                                      expiry.record.SerializeAsString()),
                            "batching the pool catalog"));
  RETURN_IF_ERROR(Write(&batch, "expiring records"));
  time_ranges_.InvalidatePool(expiry.pool_id);  // Entries below end_seq went.
  return absl::OkStatus();
}

absl::Status Store::CompactExpired(uint32_t pool_id, uint64_t end_seq) {
  const std::string begin_key = RecordKey(pool_id, 0);
  const std::string end_key = RecordKey(pool_id, end_seq);
  const rocksdb::Slice begin = ToSlice(begin_key);
  const rocksdb::Slice end = ToSlice(end_key);
  rocksdb::CompactRangeOptions options;
  // Files wholly inside the range are dropped without being rewritten.
  options.bottommost_level_compaction = rocksdb::BottommostLevelCompaction::kForce;
  for (rocksdb::ColumnFamilyHandle* family : {records_, blocks_, times_}) {
    RETURN_IF_ERROR(FromRocks(db_->CompactRange(options, family, &begin, &end),
                              absl::StrCat("compacting expired ", family->GetName())));
  }
  return absl::OkStatus();
}

}  // namespace dictlog::store
