// Backend: the storage behind compare_server's LogStore front end, one per baseline
// of the comparison (rocksdb_backend.h: raw records in RocksDB with its own zstd
// dictionaries; null_backend.h: nothing stored). Also SeqAllocator, the per-category
// id counters both use.
//
// Thread safety: a Backend is safe for concurrent calls from any number of threads.
#ifndef DICTLOG_BENCHMARKS_COMPARE_BACKEND_H_
#define DICTLOG_BENCHMARKS_COMPARE_BACKEND_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"
#include "proto/dictlog.pb.h"

namespace dictlog::compare {

struct AppendInput {
  absl::string_view category;
  absl::string_view payload;
};

class Backend {
 public:
  virtual ~Backend() = default;

  // Stores the records (all or none) and returns their ids ("<category>/<seq>"), in
  // order. INVALID_ARGUMENT (nothing stored) if a category is not valid.
  virtual absl::StatusOr<std::vector<std::string>> Append(
      absl::Span<const AppendInput> records) = 0;
  // INVALID_ARGUMENT for a malformed id, NOT_FOUND if it names no record.
  virtual absl::StatusOr<v1::Record> Get(absl::string_view id) = 0;
  // One result per id, in order. The default calls Get for each.
  virtual std::vector<absl::StatusOr<v1::Record>> MultiGet(
      absl::Span<const std::string> ids);
  // Makes the stored form final (RocksDB: flush and full compaction) and describes it
  // as one JSON object: at least "backend", "records", "raw_bytes", "stored_bytes".
  virtual absl::StatusOr<std::string> MeasureJson() = 0;
};

// Hands out the next seq of each category and counts records and raw bytes.
// Thread-safe.
class SeqAllocator {
 public:
  // The first seq of `count` consecutive ones for `category`; adds `raw_bytes`.
  uint64_t Allocate(absl::string_view category, uint64_t count, uint64_t raw_bytes)
      ABSL_LOCKS_EXCLUDED(mu_);
  uint64_t records() const ABSL_LOCKS_EXCLUDED(mu_);
  uint64_t raw_bytes() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, uint64_t> next_ ABSL_GUARDED_BY(mu_);
  uint64_t records_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t raw_bytes_ ABSL_GUARDED_BY(mu_) = 0;
};

// Validates every category of `records` (INVALID_ARGUMENT naming the first bad one),
// then allocates their seqs and returns the ids in order, with each record's seq.
absl::StatusOr<std::vector<std::string>> AssignIds(SeqAllocator& seqs,
                                                   absl::Span<const AppendInput> records,
                                                   std::vector<uint64_t>* seq_out);

}  // namespace dictlog::compare

#endif  // DICTLOG_BENCHMARKS_COMPARE_BACKEND_H_
