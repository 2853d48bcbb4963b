#include "server/pool/pool_registry.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/status_macros.h"
#include "server/pool/names.h"
#include "server/pool/pool_options.h"
#include "server/store/catalog_convert.h"

namespace dictlog::pool {
namespace {

bool BlockMode(const storage::PoolRecord& record) {
  return store::FromCatalog(record.options()).storage_mode() == v1::STORAGE_MODE_BLOCK;
}

// A block-mode pool stored before indexed blocks (ADR 0016) seals its records from its
// next seq on into them: the mark is persisted before anything is appended.
absl::Status MarkIndexedBlocks(store::Store& store, store::StoredPool* pool) {
  if (!BlockMode(pool->record) || pool->record.indexed_blocks_from_seq() != 0) {
    return absl::OkStatus();
  }
  pool->record.set_indexed_blocks_from_seq(pool->last_seq + 1);
  return store.PutPool(pool->record);
}

}  // namespace

absl::StatusOr<std::unique_ptr<PoolRegistry>> PoolRegistry::Load(
    store::Store* store, v1::PoolOptions defaults, uint64_t skip) {
  ASSIGN_OR_RETURN(std::vector<store::StoredPool> stored, store->LoadPools());
  std::unique_ptr<PoolRegistry> registry(new PoolRegistry(store, std::move(defaults)));
  absl::MutexLock lock(&registry->mu_);
  ASSIGN_OR_RETURN(registry->seq_floor_, store->SeqFloor());
  RETURN_IF_ERROR(registry->LoadDeleted(&stored));
  for (store::StoredPool& entry : stored) RETURN_IF_ERROR(MarkIndexedBlocks(*store, &entry));
  if (skip != 0) RETURN_IF_ERROR(registry->SkipSeqsLocked(skip, &stored));
  for (const store::StoredPool& entry : stored) {
    auto pool = std::make_shared<Pool>(entry);
    registry->by_name_[pool->name()] = pool;
    registry->by_id_[pool->id()] = pool;
    registry->next_id_ = std::max(registry->next_id_, pool->id() + 1);
  }
  return registry;
}

absl::Status PoolRegistry::SkipSeqsLocked(uint64_t skip,
                                          std::vector<store::StoredPool>* stored) {
  std::vector<store::SeqCeiling> ceilings;
  ceilings.reserve(stored->size());
  for (store::StoredPool& entry : *stored) {
    entry.seq_ceiling = Pool::NextSeq(entry) + skip;
    ceilings.push_back({entry.record.id(), entry.seq_ceiling});
  }
  const uint64_t floor = std::max<uint64_t>(seq_floor_, 1) + skip;
  RETURN_IF_ERROR(store_->PutSeqCeilings(ceilings, floor));
  seq_floor_ = floor;
  return absl::OkStatus();
}

absl::Status PoolRegistry::LoadDeleted(std::vector<store::StoredPool>* stored) {
  ASSIGN_OR_RETURN(std::vector<storage::DeletedPool> deleted, store_->LoadDeletedPools());
  for (const storage::DeletedPool& tombstone : deleted) {
    next_id_ = std::max(next_id_, tombstone.pool_id() + 1);
    deleted_[tombstone.name()] = tombstone;
    if (!tombstone.pending()) continue;
    // A restart in the middle of a delete: finish it (each step may be repeated).
    RETURN_IF_ERROR(store_->DeletePoolData(tombstone.pool_id()));
    auto same = [&](const store::StoredPool& p) {
      return p.record.id() == tombstone.pool_id();
    };
    const bool has_entry = std::any_of(stored->begin(), stored->end(), same);
    stored->erase(std::remove_if(stored->begin(), stored->end(), same), stored->end());
    RETURN_IF_ERROR(store_->EndPoolDelete(tombstone, has_entry));
    deleted_[tombstone.name()].set_pending(false);
    RETURN_IF_ERROR(store_->CompactPool(tombstone.pool_id()));
  }
  return absl::OkStatus();
}

std::shared_ptr<Pool> PoolRegistry::Find(absl::string_view name) const {
  absl::ReaderMutexLock lock(&mu_);
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

std::shared_ptr<Pool> PoolRegistry::FindById(uint32_t id) const {
  absl::ReaderMutexLock lock(&mu_);
  auto it = by_id_.find(id);
  return it == by_id_.end() ? nullptr : it->second;
}

absl::StatusOr<std::shared_ptr<Pool>> PoolRegistry::GetOrCreate(absl::string_view name) {
  if (std::shared_ptr<Pool> pool = Find(name)) return pool;
  absl::MutexLock lock(&mu_);
  if (auto it = by_name_.find(name); it != by_name_.end()) return it->second;
  return CreateLocked(name, v1::PoolOptions());
}

absl::StatusOr<std::shared_ptr<Pool>> PoolRegistry::Create(
    absl::string_view name, const v1::PoolOptions& options) {
  absl::MutexLock lock(&mu_);
  RETURN_IF_ERROR(ValidateName(name, "pool name"));
  if (by_name_.find(name) != by_name_.end()) {
    return absl::AlreadyExistsError(absl::StrCat("pool '", name, "' already exists"));
  }
  return CreateLocked(name, options);
}

absl::StatusOr<std::shared_ptr<Pool>> PoolRegistry::CreateLocked(
    absl::string_view name, const v1::PoolOptions& options) {
  RETURN_IF_ERROR(ValidateName(name, "pool name"));
  ASSIGN_OR_RETURN(v1::PoolOptions resolved, ApplyPoolOptions(defaults_, options));
  store::StoredPool stored;
  stored.record.set_id(next_id_);
  stored.record.set_name(std::string(name));
  *stored.record.mutable_options() = store::ToCatalog(resolved);
  stored.record.set_created_unix_ms(absl::ToUnixMillis(absl::Now()));
  uint64_t first_seq = std::max<uint64_t>(seq_floor_, 1);
  if (auto it = deleted_.find(name); it != deleted_.end()) {
    first_seq = std::max<uint64_t>(it->second.next_seq(), first_seq);  // Past its ids.
  }
  if (first_seq > 1) stored.record.set_first_seq(first_seq);
  if (BlockMode(stored.record)) stored.record.set_indexed_blocks_from_seq(first_seq);
  RETURN_IF_ERROR(store_->PutPool(stored.record));
  ++next_id_;
  auto pool = std::make_shared<Pool>(stored);
  by_name_[pool->name()] = pool;
  by_id_[pool->id()] = pool;
  return pool;
}

absl::StatusOr<std::shared_ptr<Pool>> PoolRegistry::Update(
    absl::string_view name, const v1::PoolOptions& update) {
  absl::MutexLock lock(&mu_);
  auto it = by_name_.find(name);
  if (it == by_name_.end()) {
    return absl::NotFoundError(absl::StrCat("no pool '", name, "'"));
  }
  std::shared_ptr<Pool> pool = it->second;
  storage::PoolRecord record = pool->record();
  const v1::PoolOptions current = store::FromCatalog(record.options());
  RETURN_IF_ERROR(CheckUpdatable(current, update));
  ASSIGN_OR_RETURN(const v1::PoolOptions updated, ApplyPoolOptions(current, update));
  *record.mutable_options() = store::ToCatalog(updated);
  RETURN_IF_ERROR(store_->PutPool(record));
  pool->set_record(record);
  return pool;
}

absl::StatusOr<std::shared_ptr<Pool>> PoolRegistry::SetActiveDictionaryId(
    absl::string_view name, uint32_t dictionary_id) {
  absl::MutexLock lock(&mu_);
  auto it = by_name_.find(name);
  if (it == by_name_.end()) {
    return absl::NotFoundError(absl::StrCat("no pool '", name, "'"));
  }
  storage::PoolRecord record = it->second->record();
  record.set_active_dictionary_id(dictionary_id);
  RETURN_IF_ERROR(store_->PutPool(record));
  it->second->set_record(record);
  return it->second;
}

absl::Status PoolRegistry::Rewrite(
    Pool& pool, const std::function<absl::Status(storage::PoolRecord&)>& write) {
  absl::MutexLock lock(&mu_);
  storage::PoolRecord record = pool.record();
  return write(record);
}

absl::StatusOr<storage::DeletedPool> PoolRegistry::Remove(Pool& pool) {
  absl::MutexLock lock(&mu_);
  auto it = by_name_.find(pool.name());
  if (it == by_name_.end() || it->second.get() != &pool) {
    return absl::NotFoundError(absl::StrCat("no pool '", pool.name(), "'"));
  }
  if (auto d = deleted_.find(pool.name()); d != deleted_.end() && d->second.pending()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "an earlier delete of pool '", pool.name(), "' is still running"));
  }
  storage::DeletedPool tombstone;
  tombstone.set_pool_id(pool.id());
  tombstone.set_name(pool.name());
  tombstone.set_next_seq(pool.next_seq());
  tombstone.set_deleted_unix_ms(absl::ToUnixMillis(absl::Now()));
  tombstone.set_pending(true);
  RETURN_IF_ERROR(store_->BeginPoolDelete(tombstone));
  pool.set_deleted();
  deleted_[pool.name()] = tombstone;
  by_id_.erase(pool.id());
  by_name_.erase(it);
  return tombstone;
}

absl::Status PoolRegistry::FinishRemove(const storage::DeletedPool& tombstone) {
  absl::MutexLock lock(&mu_);
  // A pool created under the name since owns the catalog entry now.
  const bool replaced = by_name_.find(tombstone.name()) != by_name_.end();
  RETURN_IF_ERROR(store_->EndPoolDelete(tombstone, !replaced));
  auto it = deleted_.find(tombstone.name());
  if (it != deleted_.end() && it->second.pool_id() == tombstone.pool_id()) {
    it->second.set_pending(false);
  }
  return absl::OkStatus();
}

bool PoolRegistry::WasDeleted(absl::string_view name) const {
  absl::ReaderMutexLock lock(&mu_);
  return deleted_.find(name) != deleted_.end();
}

bool PoolRegistry::WasAllocated(uint32_t id) const {
  absl::ReaderMutexLock lock(&mu_);
  return id != 0 && id < next_id_;
}

size_t PoolRegistry::Count() const {
  absl::ReaderMutexLock lock(&mu_);
  return by_name_.size();
}

std::vector<std::shared_ptr<Pool>> PoolRegistry::List() const {
  absl::ReaderMutexLock lock(&mu_);
  std::vector<std::shared_ptr<Pool>> pools;
  pools.reserve(by_name_.size());
  for (const auto& [name, pool] : by_name_) pools.push_back(pool);
  return pools;
}

}  // namespace dictlog::pool
