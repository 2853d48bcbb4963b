#include "server/pool/pool_registry.h"

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
    store::Store* store, v1::PoolOptions defaults) {
  ASSIGN_OR_RETURN(std::vector<store::StoredPool> stored, store->LoadPools());
  std::unique_ptr<PoolRegistry> registry(new PoolRegistry(store, std::move(defaults)));
  absl::MutexLock lock(&registry->mu_);
  for (store::StoredPool& entry : stored) {
    RETURN_IF_ERROR(MarkIndexedBlocks(*store, &entry));
    auto pool = std::make_shared<Pool>(entry);
    registry->by_name_[pool->name()] = pool;
    registry->by_id_[pool->id()] = pool;
    registry->next_id_ = std::max(registry->next_id_, pool->id() + 1);
  }
  return registry;
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
  if (BlockMode(stored.record)) stored.record.set_indexed_blocks_from_seq(1);
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
