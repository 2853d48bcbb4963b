// Store's pool deletion (docs/storage-format.md, "Deleting a pool"): a tombstone
// first, then one batch of range deletions over everything keyed by the pool's id,
// then the pool's catalog entry; a compaction of the ranges gives the space back.
// Also a cluster node's drop of a partition it no longer holds (DropPartitionData): the
// same range deletions for the partition's pools, keeping the pools and dictionaries.
#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "server/store/keys.h"
#include "server/store/rocksdb_status.h"
#include "server/store/store.h"

namespace dictlog::store {
namespace {

rocksdb::Slice ToSlice(absl::string_view s) { return rocksdb::Slice(s.data(), s.size()); }

// The first key past every key of pool `pool_id` in records, blocks, times and
// counters (4-byte id prefixes): the next id, or above any key of the last id.
std::string PoolRangeEnd(uint32_t pool_id) {
  if (pool_id == UINT32_MAX) return std::string(kIndexedBlockKeyBytes + 1, '\xff');
  std::string end;
  PutFixed32BE(pool_id + 1, &end);
  return end;
}

std::string PoolRangeBegin(uint32_t pool_id) {
  std::string begin;
  PutFixed32BE(pool_id, &begin);
  return begin;
}

}  // namespace

absl::Status Store::BeginPoolDelete(const storage::DeletedPool& tombstone) {
  // Synced: a pool created later under the name starts at its next_seq.
  return Put(catalog_, DeletedPoolKey(tombstone.name()), tombstone.SerializeAsString(),
             "writing a pool tombstone", /*sync=*/true);
}

absl::StatusOr<std::vector<storage::DeletedPool>> Store::LoadDeletedPools() const {
  std::vector<storage::DeletedPool> deleted;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), catalog_));
  const std::string prefix(1, kDeletedPoolPrefix);
  for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
    storage::DeletedPool tombstone;
    if (!tombstone.ParseFromArray(it->value().data(), static_cast<int>(it->value().size()))) {
      return absl::DataLossError(absl::StrCat("tombstone of pool '",
                                              it->key().ToString().substr(1),
                                              "' does not parse"));
    }
    deleted.push_back(std::move(tombstone));
  }
  RETURN_IF_ERROR(FromRocks(it->status(), "reading pool tombstones"));
  return deleted;
}

absl::Status Store::DeletePoolData(uint32_t pool_id) {
  const std::string begin = PoolRangeBegin(pool_id);
  const std::string end = PoolRangeEnd(pool_id);
  rocksdb::WriteBatch batch;
  // Records, both block layouts (12- and 20-byte keys) and times.
  for (rocksdb::ColumnFamilyHandle* family : {records_, blocks_, times_}) {
    RETURN_IF_ERROR(FromRocks(batch.DeleteRange(family, ToSlice(begin), ToSlice(end)),
                              "batching a range deletion"));
  }
  RETURN_IF_ERROR(FromRocks(batch.Delete(counters_, CounterKey(pool_id)),
                            "batching a delete"));
  const std::string categories = CategoryKeyPrefix(pool_id);
  std::string categories_end = categories;
  categories_end.push_back('\xff');  // Categories are printable names: below 0xff.
  RETURN_IF_ERROR(FromRocks(
      batch.DeleteRange(catalog_, ToSlice(categories), ToSlice(categories_end)),
      "batching a range deletion"));
  RETURN_IF_ERROR(FromRocks(batch.Delete(catalog_, RecompressKey(pool_id)),
                            "batching a delete"));
  RETURN_IF_ERROR(FromRocks(batch.Delete(catalog_, SeqCeilingKey(pool_id)),
                            "batching a delete"));
  const std::string lost = LostSeqsPrefix(pool_id);
  const std::string lost_end = lost + std::string(9, '\xff');  // Past every first seq.
  RETURN_IF_ERROR(FromRocks(batch.DeleteRange(catalog_, ToSlice(lost), ToSlice(lost_end)),
                            "batching a range deletion"));
  // The pool's dictionaries become tombstones (their ids are never reused), as gc's.
  ASSIGN_OR_RETURN(std::vector<storage::DictionaryRecord> dictionaries, LoadDictionaries());
  for (const storage::DictionaryRecord& dictionary : dictionaries) {
    if (dictionary.pool_id() != pool_id || dictionary.retired()) continue;
    storage::DictionaryRecord tombstone;
    tombstone.set_id(dictionary.id());
    tombstone.set_pool_id(dictionary.pool_id());
    tombstone.set_pool(dictionary.pool());
    tombstone.set_retired(true);
    RETURN_IF_ERROR(FromRocks(batch.Put(dictionaries_, DictionaryKey(dictionary.id()),
                                        tombstone.SerializeAsString()),
                              "batching a tombstone"));
    RETURN_IF_ERROR(FromRocks(batch.Delete(counters_, DictionaryCounterKey(dictionary.id())),
                              "batching a delete"));
  }
  RETURN_IF_ERROR(Write(&batch, "deleting a pool's data"));
  time_ranges_.Forget(pool_id);  // The id is never used again.
  return absl::OkStatus();
}

absl::Status Store::DropPartitionData(uint32_t partition,
                                      absl::Span<const uint32_t> pool_ids) {
  rocksdb::WriteBatch batch;
  for (const uint32_t pool_id : pool_ids) {
    const std::string begin = PoolRangeBegin(pool_id);
    const std::string end = PoolRangeEnd(pool_id);
    for (rocksdb::ColumnFamilyHandle* family : {records_, blocks_, times_}) {
      RETURN_IF_ERROR(FromRocks(batch.DeleteRange(family, ToSlice(begin), ToSlice(end)),
                                "batching a range deletion"));
    }
    RETURN_IF_ERROR(FromRocks(batch.Delete(counters_, CounterKey(pool_id)),
                              "batching a delete"));
  }
  // The dictionaries stay; the counts of records naming them go with the records.
  ASSIGN_OR_RETURN(std::vector<storage::DictionaryRecord> dictionaries, LoadDictionaries());
  for (const storage::DictionaryRecord& dictionary : dictionaries) {
    if (std::find(pool_ids.begin(), pool_ids.end(), dictionary.pool_id()) == pool_ids.end()) {
      continue;
    }
    RETURN_IF_ERROR(FromRocks(batch.Delete(counters_, DictionaryCounterKey(dictionary.id())),
                              "batching a delete"));
  }
  RETURN_IF_ERROR(FromRocks(batch.Delete(catalog_, LogPositionKey(partition)),
                            "batching a delete"));
  RETURN_IF_ERROR(Write(&batch, "dropping a partition's records"));
  for (const uint32_t pool_id : pool_ids) time_ranges_.Forget(pool_id);
  return absl::OkStatus();
}

absl::Status Store::EndPoolDelete(const storage::DeletedPool& tombstone, bool remove_entry) {
  storage::DeletedPool done = tombstone;
  done.set_pending(false);
  rocksdb::WriteBatch batch;
  if (remove_entry) {
    RETURN_IF_ERROR(FromRocks(batch.Delete(catalog_, PoolKey(tombstone.name())),
                              "batching a delete"));
  }
  RETURN_IF_ERROR(FromRocks(
      batch.Put(catalog_, DeletedPoolKey(tombstone.name()), done.SerializeAsString()),
      "batching a pool tombstone"));
  return Write(&batch, "removing a deleted pool's catalog entry");
}

absl::Status Store::CompactPool(uint32_t pool_id, bool rewrite_bottom) {
  const std::string begin_key = PoolRangeBegin(pool_id);
  const std::string end_key = PoolRangeEnd(pool_id);
  const rocksdb::Slice begin = ToSlice(begin_key);
  const rocksdb::Slice end = ToSlice(end_key);
  rocksdb::CompactRangeOptions options;
  // Files wholly inside the range are dropped without being rewritten.
  if (rewrite_bottom) {
    options.bottommost_level_compaction = rocksdb::BottommostLevelCompaction::kForce;
  }
  for (rocksdb::ColumnFamilyHandle* family : {records_, blocks_, times_}) {
    RETURN_IF_ERROR(FromRocks(db_->CompactRange(options, family, &begin, &end),
                              absl::StrCat("compacting ", family->GetName())));
  }
  return absl::OkStatus();
}

}  // namespace dictlog::store
