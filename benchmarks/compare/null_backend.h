// NullBackend: the ceiling of the comparison. Stores no payloads: Append keeps only
// each record's payload length (4 bytes a record) and acks with real-shaped ids; Get
// answers a record of that length (filler bytes), so the wire cost matches the real
// servers' while storage and decompression cost nothing.
//
// Thread safety: safe for concurrent calls (one reader/writer lock).
#ifndef DICTLOG_BENCHMARKS_COMPARE_NULL_BACKEND_H_
#define DICTLOG_BENCHMARKS_COMPARE_NULL_BACKEND_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "benchmarks/compare/backend.h"

namespace dictlog::compare {

class NullBackend : public Backend {
 public:
  absl::StatusOr<std::vector<std::string>> Append(
      absl::Span<const AppendInput> records) override;
  absl::StatusOr<v1::Record> Get(absl::string_view id) override;
  // stored_bytes is 0.
  absl::StatusOr<std::string> MeasureJson() override;

 private:
  absl::Mutex mu_;
  // Per category, the payload length of seq i + 1 at index i.
  absl::flat_hash_map<std::string, std::vector<uint32_t>> lengths_ ABSL_GUARDED_BY(mu_);
  uint64_t records_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t raw_bytes_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace dictlog::compare

#endif  // DICTLOG_BENCHMARKS_COMPARE_NULL_BACKEND_H_
