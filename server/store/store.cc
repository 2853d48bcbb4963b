#include "server/store/store.h"

#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/table.h>
#include <rocksdb/write_batch.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "server/codec/varint.h"
#include "server/store/keys.h"

namespace dictlog::store {
namespace {

constexpr char kRecordsFamily[] = "records";
constexpr char kCatalogFamily[] = "catalog";
constexpr char kCountersFamily[] = "counters";

// The one place where RocksDB statuses become absl statuses.
absl::Status FromRocks(const rocksdb::Status& s, absl::string_view what) {
  if (s.ok()) return absl::OkStatus();
  const std::string message = absl::StrCat(what, ": ", s.ToString());
  if (s.IsNotFound()) return absl::NotFoundError(message);
  if (s.IsCorruption()) return absl::DataLossError(message);
  if (s.IsNoSpace() || s.IsMemoryLimit()) return absl::ResourceExhaustedError(message);
  if (s.IsBusy() || s.IsTryAgain() || s.IsTimedOut()) {
    return absl::UnavailableError(message);
  }
  if (s.IsInvalidArgument()) return absl::InvalidArgumentError(message);
  if (s.IsIOError()) return absl::UnavailableError(message);
  return absl::InternalError(message);
}

rocksdb::Slice ToSlice(absl::string_view s) { return rocksdb::Slice(s.data(), s.size()); }

rocksdb::ColumnFamilyOptions RecordsFamilyOptions() {
  rocksdb::ColumnFamilyOptions options;
  // Values are zstd frames already; a second compression pass only costs CPU.
  options.compression = rocksdb::kNoCompression;
  rocksdb::BlockBasedTableOptions table;
  table.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
  options.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  return options;
}

rocksdb::ColumnFamilyOptions CountersFamilyOptions() {
  rocksdb::ColumnFamilyOptions options;
  options.merge_operator = NewPoolCountersMergeOperator();
  return options;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Store>> Store::Open(const Options& options) {
  std::error_code error;
  std::filesystem::create_directories(options.path, error);  // RocksDB makes one level.
  if (error) {
    return absl::UnavailableError(
        absl::StrCat("cannot create data directory ", options.path, ": ", error.message()));
  }
  rocksdb::DBOptions db_options;
  db_options.create_if_missing = true;
  db_options.create_missing_column_families = true;
  db_options.paranoid_checks = true;
  std::vector<rocksdb::ColumnFamilyDescriptor> families = {
      {rocksdb::kDefaultColumnFamilyName, rocksdb::ColumnFamilyOptions()},
      {kRecordsFamily, RecordsFamilyOptions()},
      {kCatalogFamily, rocksdb::ColumnFamilyOptions()},
      {kCountersFamily, CountersFamilyOptions()},
  };
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* raw_db = nullptr;
  RETURN_IF_ERROR(FromRocks(
      rocksdb::DB::Open(db_options, options.path, families, &handles, &raw_db),
      absl::StrCat("opening database at ", options.path)));
  std::unique_ptr<rocksdb::DB> db(raw_db);
  return std::unique_ptr<Store>(
      new Store(std::move(db), std::move(handles), options.sync_writes));
}

Store::Store(std::unique_ptr<rocksdb::DB> db,
             std::vector<rocksdb::ColumnFamilyHandle*> handles, bool sync_writes)
    : db_(std::move(db)), handles_(std::move(handles)), sync_writes_(sync_writes) {
  records_ = handles_[1];
  catalog_ = handles_[2];
  counters_ = handles_[3];
}

Store::~Store() {
  for (rocksdb::ColumnFamilyHandle* handle : handles_) {
    db_->DestroyColumnFamilyHandle(handle);
  }
  db_->Close();
}

absl::StatusOr<std::vector<StoredPool>> Store::LoadPools() const {
  std::vector<StoredPool> pools;
  std::unique_ptr<rocksdb::Iterator> it(
      db_->NewIterator(rocksdb::ReadOptions(), catalog_));
  const std::string prefix(1, kPoolPrefix);
  for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
    StoredPool pool;
    if (!pool.record.ParseFromArray(it->value().data(),
                                    static_cast<int>(it->value().size()))) {
      return absl::DataLossError(
          absl::StrCat("catalog entry for pool '", it->key().ToString().substr(1),
                       "' does not parse"));
    }
    pools.push_back(std::move(pool));
  }
  RETURN_IF_ERROR(FromRocks(it->status(), "reading the pool catalog"));
  for (StoredPool& pool : pools) RETURN_IF_ERROR(LoadPoolDetails(&pool));
  return pools;
}

absl::Status Store::LoadPoolDetails(StoredPool* pool) const {
  const uint32_t id = pool->record.id();
  std::unique_ptr<rocksdb::Iterator> it(
      db_->NewIterator(rocksdb::ReadOptions(), catalog_));
  const std::string prefix = CategoryKeyPrefix(id);
  for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
    absl::string_view value(it->value().data(), it->value().size());
    uint32_t index = 0;
    if (!codec::GetVarint32(&value, &index) || !value.empty()) {
      return absl::DataLossError(
          absl::StrCat("category entry of pool ", id, " does not parse"));
    }
    pool->categories.emplace_back(index, it->key().ToString().substr(prefix.size()));
  }
  RETURN_IF_ERROR(FromRocks(it->status(), "reading categories"));
  std::sort(pool->categories.begin(), pool->categories.end());

  std::string counters;
  rocksdb::Status s =
      db_->Get(rocksdb::ReadOptions(), counters_, CounterKey(id), &counters);
  if (!s.IsNotFound()) {
    RETURN_IF_ERROR(FromRocks(s, "reading pool counters"));
    if (!DecodePoolCounters(counters, &pool->counters)) {
      return absl::DataLossError(absl::StrCat("counters of pool ", id, " are corrupt"));
    }
  }
  ASSIGN_OR_RETURN(pool->last_seq, LastSeq(id));
  return absl::OkStatus();
}

absl::StatusOr<uint64_t> Store::LastSeq(uint32_t pool_id) const {
  std::unique_ptr<rocksdb::Iterator> it(
      db_->NewIterator(rocksdb::ReadOptions(), records_));
  it->SeekForPrev(RecordKey(pool_id, UINT64_MAX));
  uint32_t found_pool = 0;
  uint64_t seq = 0;
  if (it->Valid() &&
      ParseRecordKey(absl::string_view(it->key().data(), it->key().size()), &found_pool,
                     &seq) &&
      found_pool == pool_id) {
    return seq;
  }
  RETURN_IF_ERROR(FromRocks(it->status(), "finding the last record"));
  return 0;
}

absl::Status Store::PutPool(const storage::PoolRecord& pool) {
  rocksdb::WriteOptions options;
  options.sync = sync_writes_;
  return FromRocks(db_->Put(options, catalog_, PoolKey(pool.name()),
                            pool.SerializeAsString()),
                   "writing the pool catalog");
}

absl::Status Store::PutCategory(uint32_t pool_id, uint32_t index,
                                absl::string_view category) {
  std::string value;
  codec::PutVarint32(index, &value);
  rocksdb::WriteOptions options;
  options.sync = sync_writes_;
  return FromRocks(
      db_->Put(options, catalog_, CategoryKey(pool_id, category), value),
      "writing a category");
}

absl::Status Store::WriteRecords(absl::Span<const RecordWrite> records) {
  rocksdb::WriteBatch batch;
  std::map<uint32_t, PoolCounters> deltas;
  for (const RecordWrite& record : records) {
    RETURN_IF_ERROR(FromRocks(
        batch.Put(records_, RecordKey(record.pool_id, record.seq), ToSlice(record.value)),
        "batching a record"));
    PoolCounters& delta = deltas[record.pool_id];
    delta.records += 1;
    delta.raw_bytes += record.raw_bytes;
    delta.stored_bytes += record.value.size();
  }
  for (const auto& [pool_id, delta] : deltas) {
    RETURN_IF_ERROR(FromRocks(
        batch.Merge(counters_, CounterKey(pool_id), EncodePoolCounters(delta)),
        "batching counters"));
  }
  rocksdb::WriteOptions options;
  options.sync = sync_writes_;
  return FromRocks(db_->Write(options, &batch), "writing records");
}

absl::StatusOr<std::string> Store::GetRecord(RecordRef ref) const {
  std::string value;
  RETURN_IF_ERROR(FromRocks(db_->Get(rocksdb::ReadOptions(), records_,
                                     RecordKey(ref.pool_id, ref.seq), &value),
                            "reading a record"));
  return value;
}

std::vector<absl::StatusOr<std::string>> Store::MultiGetRecords(
    absl::Span<const RecordRef> refs) const {
  std::vector<std::string> keys;
  keys.reserve(refs.size());
  for (const RecordRef& ref : refs) keys.push_back(RecordKey(ref.pool_id, ref.seq));
  std::vector<rocksdb::Slice> slices(keys.begin(), keys.end());
  std::vector<rocksdb::PinnableSlice> values(refs.size());
  std::vector<rocksdb::Status> statuses(refs.size());
  db_->MultiGet(rocksdb::ReadOptions(), records_, slices.size(), slices.data(),
                values.data(), statuses.data());
  std::vector<absl::StatusOr<std::string>> results;
  results.reserve(refs.size());
  for (size_t i = 0; i < refs.size(); ++i) {
    absl::Status status = FromRocks(statuses[i], "reading a record");
    if (status.ok()) {
      results.emplace_back(values[i].ToString());
    } else {
      results.emplace_back(std::move(status));
    }
  }
  return results;
}

absl::StatusOr<std::vector<ScannedRecord>> Store::ScanRecords(uint32_t pool_id,
                                                              uint64_t from_seq,
                                                              size_t max_records) const {
  std::vector<ScannedRecord> out;
  std::unique_ptr<rocksdb::Iterator> it(
      db_->NewIterator(rocksdb::ReadOptions(), records_));
  for (it->Seek(RecordKey(pool_id, from_seq)); it->Valid() && out.size() < max_records;
       it->Next()) {
    uint32_t found_pool = 0;
    uint64_t seq = 0;
    if (!ParseRecordKey(absl::string_view(it->key().data(), it->key().size()),
                        &found_pool, &seq)) {
      return absl::DataLossError("malformed key in the records column family");
    }
    if (found_pool != pool_id) break;
    out.push_back({seq, it->value().ToString()});
  }
  RETURN_IF_ERROR(FromRocks(it->status(), "scanning records"));
  return out;
}

}  // namespace dictlog::store
