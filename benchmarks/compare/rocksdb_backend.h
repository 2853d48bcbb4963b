// RocksDbBackend: the "RocksDB's own dictionary compression" baseline. Raw records
// (no dictlog framing) in one RocksDB column family of BlockBasedTable blocks
// compressed by zstd with per-SST dictionaries (CompressionOptions max_dict_bytes,
// zstd_max_train_bytes), the same at every level and at the bottommost one; a bloom
// filter of 10 bits per key and an LRU cache of uncompressed blocks, as dictlog's
// records column family has. With `uncompressed` the blocks are stored as they are
// (rocksdb_plain: what a RocksDB lookup costs with no decompression at all).
//
// Thread safety: safe for concurrent calls (RocksDB's own; ids from a SeqAllocator).
#ifndef DICTLOG_BENCHMARKS_COMPARE_ROCKSDB_BACKEND_H_
#define DICTLOG_BENCHMARKS_COMPARE_ROCKSDB_BACKEND_H_

#include <rocksdb/db.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "benchmarks/compare/backend.h"

namespace dictlog::compare {

struct RocksDbBackendOptions {
  // Directory of the database; it must not hold one yet (ids restart at 1).
  std::string path;
  // BlockBasedTableOptions::block_size. Default 4 KiB.
  size_t block_bytes = 4096;
  // CompressionOptions::max_dict_bytes (0: no dictionary). Default 16 KiB.
  uint32_t max_dict_bytes = 16 * 1024;
  // CompressionOptions::zstd_max_train_bytes (0: raw samples as the dictionary;
  // ignored without a dictionary). Default 1.6 MB.
  uint32_t zstd_max_train_bytes = 1600 * 1000;
  // Block cache (uncompressed blocks). Default 8 MiB, RocksDB's own default.
  size_t block_cache_bytes = 8 << 20;
  // No compression at any level (max_dict_bytes and zstd_max_train_bytes unused).
  bool uncompressed = false;
};

class RocksDbBackend : public Backend {
 public:
  // FAILED_PRECONDITION if a database exists at options.path; UNAVAILABLE if RocksDB
  // cannot open it.
  static absl::StatusOr<std::unique_ptr<RocksDbBackend>> Open(
      const RocksDbBackendOptions& options);
  ~RocksDbBackend() override;

  absl::StatusOr<std::vector<std::string>> Append(
      absl::Span<const AppendInput> records) override;
  absl::StatusOr<v1::Record> Get(absl::string_view id) override;
  // One rocksdb::DB::MultiGet for the well-formed ids.
  std::vector<absl::StatusOr<v1::Record>> MultiGet(
      absl::Span<const std::string> ids) override;
  // Flushes, compacts everything into the bottommost level, then reports the live SST
  // files: "stored_bytes" (their sizes), and from their table properties data, index
  // and filter bytes, data blocks, entries, raw key/value bytes, the compression and
  // its options as RocksDB recorded them (so one can check the dictionary settings
  // took effect).
  absl::StatusOr<std::string> MeasureJson() override;

 private:
  explicit RocksDbBackend(std::unique_ptr<rocksdb::DB> db) : db_(std::move(db)) {}

  std::unique_ptr<rocksdb::DB> db_;
  SeqAllocator seqs_;
};

// The RocksDB options the backend opens with (exposed for its test).
rocksdb::Options RocksDbBackendDbOptions(const RocksDbBackendOptions& options);

}  // namespace dictlog::compare

#endif  // DICTLOG_BENCHMARKS_COMPARE_ROCKSDB_BACKEND_H_
