// CallLog: what `dictlog-bench read` records call by call for a checker such as
// tests/cluster:chaos_test (benchmarks/README.md): each acknowledged append as
// `id<TAB>fnv1a64-hex of the payload<TAB>payload bytes`, and each failed call (or failed
// id within a MultiGet) as a CSV line `unix_ms,op,code,id` (op get|multiget|append, code
// the absl code's name, id empty for an append). Either file may be left out.
//
// Thread Safety: thread-safe; the workers share one CallLog. Lines are written whole.
#ifndef DICTLOG_BENCHMARKS_LOAD_CALL_LOG_H_
#define DICTLOG_BENCHMARKS_LOAD_CALL_LOG_H_

#include <cstdint>
#include <fstream>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace dictlog::bench {

// FNV-1a 64 of `bytes`, as 16 lowercase hex digits.
std::string PayloadHash(absl::string_view bytes);

class CallLog {
 public:
  // Creates (truncates) the files whose paths are not empty; PERMISSION_DENIED naming
  // the one that cannot be created.
  static absl::StatusOr<std::unique_ptr<CallLog>> Open(const std::string& acked_path,
                                                       const std::string& errors_path);
  CallLog(const CallLog&) = delete;
  CallLog& operator=(const CallLog&) = delete;

  void Acknowledged(absl::string_view id, absl::string_view payload);
  void Failed(absl::Time when, absl::string_view op, absl::StatusCode code,
              absl::string_view id);
  // Flushes and closes both; DATA_LOSS if a write failed.
  absl::Status Close();

 private:
  CallLog() = default;

  absl::Mutex mu_;
  std::ofstream acked_ ABSL_GUARDED_BY(mu_);
  std::ofstream errors_ ABSL_GUARDED_BY(mu_);
};

}  // namespace dictlog::bench

#endif  // DICTLOG_BENCHMARKS_LOAD_CALL_LOG_H_
