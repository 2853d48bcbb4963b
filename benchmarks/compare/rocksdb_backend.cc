#include "benchmarks/compare/rocksdb_backend.h"

#include <rocksdb/cache.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/table.h>
#include <rocksdb/table_properties.h>
#include <rocksdb/write_batch.h>

#include <filesystem>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "benchmarks/compare/record_id.h"
#include "server/store/rocksdb_status.h"

namespace dictlog::compare {
namespace {

using store::FromRocks;

rocksdb::CompressionOptions DictionaryCompression(const RocksDbBackendOptions& options) {
  rocksdb::CompressionOptions compression;
  compression.max_dict_bytes = options.max_dict_bytes;
  // RocksDB refuses training input without a dictionary to train.
  compression.zstd_max_train_bytes =
      options.max_dict_bytes == 0 ? 0 : options.zstd_max_train_bytes;
  compression.enabled = true;  // Only read for bottommost_compression_opts.
  return compression;
}

// A JSON string of printable text (RocksDB's property strings are ASCII).
std::string Quote(absl::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += (c >= 0x20 && c < 0x7f) ? c : '?';
  }
  return out + "\"";
}

v1::Record MakeRecord(absl::string_view id, std::string category, std::string payload) {
  v1::Record record;
  record.set_id(std::string(id));
  record.set_category(std::move(category));
  record.set_payload(std::move(payload));
  return record;
}

}  // namespace

rocksdb::Options RocksDbBackendDbOptions(const RocksDbBackendOptions& options) {
  rocksdb::Options db;
  db.create_if_missing = true;
  db.error_if_exists = true;
  const rocksdb::CompressionType type =
      options.uncompressed ? rocksdb::kNoCompression : rocksdb::kZSTD;
  db.compression = type;
  db.bottommost_compression = type;
  if (!options.uncompressed) {
    db.compression_opts = DictionaryCompression(options);
    db.bottommost_compression_opts = DictionaryCompression(options);
  }
  rocksdb::BlockBasedTableOptions table;
  table.block_size = options.block_bytes;
  table.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
  table.block_cache = rocksdb::NewLRUCache(options.block_cache_bytes);
  db.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  return db;
}

absl::StatusOr<std::unique_ptr<RocksDbBackend>> RocksDbBackend::Open(
    const RocksDbBackendOptions& options) {
  // A fresh database only (error_if_exists); said here, since RocksDB reports it as an
  // invalid argument.
  if (std::filesystem::exists(options.path + "/CURRENT")) {
    return absl::FailedPreconditionError(
        absl::StrCat("opening ", options.path, ": a database exists there already"));
  }
  rocksdb::DB* raw = nullptr;
  if (absl::Status status = FromRocks(
          rocksdb::DB::Open(RocksDbBackendDbOptions(options), options.path, &raw),
          absl::StrCat("opening ", options.path));
      !status.ok()) {
    return status;
  }
  return std::unique_ptr<RocksDbBackend>(new RocksDbBackend(std::unique_ptr<rocksdb::DB>(raw)));
}

RocksDbBackend::~RocksDbBackend() {
  if (db_ != nullptr) db_->Close().PermitUncheckedError();
}

absl::StatusOr<std::vector<std::string>> RocksDbBackend::Append(
    absl::Span<const AppendInput> records) {
  std::vector<uint64_t> seqs;
  absl::StatusOr<std::vector<std::string>> ids = AssignIds(seqs_, records, &seqs);
  if (!ids.ok()) return ids.status();
  rocksdb::WriteBatch batch;
  for (size_t i = 0; i < records.size(); ++i) {
    const std::string key = RecordKey(records[i].category, seqs[i]);
    batch.Put(key, rocksdb::Slice(records[i].payload.data(), records[i].payload.size()));
  }
  if (absl::Status status = FromRocks(db_->Write(rocksdb::WriteOptions(), &batch),
                                      "writing records");
      !status.ok()) {
    return status;
  }
  return ids;
}

absl::StatusOr<v1::Record> RocksDbBackend::Get(absl::string_view id) {
  absl::StatusOr<RecordId> parsed = ParseRecordId(id);
  if (!parsed.ok()) return parsed.status();
  std::string payload;
  const rocksdb::Status status =
      db_->Get(rocksdb::ReadOptions(), RecordKey(parsed->pool, parsed->seq), &payload);
  if (status.IsNotFound()) return absl::NotFoundError(absl::StrCat("no record ", id));
  if (absl::Status error = FromRocks(status, absl::StrCat("reading ", id)); !error.ok()) {
    return error;
  }
  return MakeRecord(id, std::move(parsed->pool), std::move(payload));
}

std::vector<absl::StatusOr<v1::Record>> RocksDbBackend::MultiGet(
    absl::Span<const std::string> ids) {
  std::vector<absl::StatusOr<v1::Record>> results(ids.size(), absl::UnknownError(""));
  std::vector<size_t> index;  // results slot of each key
  std::vector<RecordId> parsed;
  std::vector<std::string> keys;
  for (size_t i = 0; i < ids.size(); ++i) {
    absl::StatusOr<RecordId> id = ParseRecordId(ids[i]);
    if (!id.ok()) {
      results[i] = id.status();
      continue;
    }
    keys.push_back(RecordKey(id->pool, id->seq));
    parsed.push_back(*std::move(id));
    index.push_back(i);
  }
  std::vector<rocksdb::Slice> slices(keys.begin(), keys.end());
  std::vector<rocksdb::PinnableSlice> values(keys.size());
  std::vector<rocksdb::Status> statuses(keys.size());
  db_->MultiGet(rocksdb::ReadOptions(), db_->DefaultColumnFamily(), keys.size(),
                slices.data(), values.data(), statuses.data());
  for (size_t k = 0; k < keys.size(); ++k) {
    const std::string& id = ids[index[k]];
    if (statuses[k].IsNotFound()) {
      results[index[k]] = absl::NotFoundError(absl::StrCat("no record ", id));
    } else if (!statuses[k].ok()) {
      results[index[k]] = FromRocks(statuses[k], absl::StrCat("reading ", id));
    } else {
      results[index[k]] = MakeRecord(id, std::move(parsed[k].pool), values[k].ToString());
    }
  }
  return results;
}

absl::StatusOr<std::string> RocksDbBackend::MeasureJson() {
  if (absl::Status s = FromRocks(db_->Flush(rocksdb::FlushOptions()), "flushing"); !s.ok()) {
    return s;
  }
  rocksdb::CompactRangeOptions compact;
  compact.bottommost_level_compaction = rocksdb::BottommostLevelCompaction::kForce;
  if (absl::Status s = FromRocks(db_->CompactRange(compact, nullptr, nullptr), "compacting");
      !s.ok()) {
    return s;
  }
  std::vector<rocksdb::LiveFileMetaData> files;
  db_->GetLiveFilesMetaData(&files);
  uint64_t sst_bytes = 0;
  for (const rocksdb::LiveFileMetaData& file : files) sst_bytes += file.size;
  rocksdb::TablePropertiesCollection tables;
  if (absl::Status s = FromRocks(db_->GetPropertiesOfAllTables(&tables), "table properties");
      !s.ok()) {
    return s;
  }
  rocksdb::TableProperties sum;
  std::set<std::string> compressions, compression_options;
  for (const auto& [name, table] : tables) {
    sum.Add(*table);
    compressions.insert(table->compression_name);
    compression_options.insert(table->compression_options);
  }
  return absl::StrFormat(
      "{\"backend\":\"rocksdb_dict\",\"records\":%d,\"raw_bytes\":%d,\"stored_bytes\":%d,"
      "\"sst_files\":%d,\"data_bytes\":%d,\"index_bytes\":%d,\"filter_bytes\":%d,"
      "\"data_blocks\":%d,\"entries\":%d,\"raw_key_bytes\":%d,\"raw_value_bytes\":%d,"
      "\"compression\":%s,\"compression_options\":%s}",
      seqs_.records(), seqs_.raw_bytes(), sst_bytes, files.size(), sum.data_size,
      sum.index_size, sum.filter_size, sum.num_data_blocks, sum.num_entries,
      sum.raw_key_size, sum.raw_value_size, Quote(absl::StrJoin(compressions, "|")),
      Quote(absl::StrJoin(compression_options, "|")));
}

}  // namespace dictlog::compare
