#include "benchmarks/load/call_log.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/pool_partition.h"

namespace dictlog::bench {

std::string PayloadHash(absl::string_view bytes) {
  return absl::StrFormat("%016x", PoolHash(bytes));  // FNV-1a 64 over any bytes
}

absl::StatusOr<std::unique_ptr<CallLog>> CallLog::Open(const std::string& acked_path,
                                                       const std::string& errors_path) {
  std::unique_ptr<CallLog> log(new CallLog);
  absl::MutexLock lock(&log->mu_);
  if (!acked_path.empty()) {
    log->acked_.open(acked_path, std::ios::trunc);
    if (!log->acked_) return absl::PermissionDeniedError("cannot create " + acked_path);
  }
  if (!errors_path.empty()) {
    log->errors_.open(errors_path, std::ios::trunc);
    if (!log->errors_) return absl::PermissionDeniedError("cannot create " + errors_path);
  }
  return log;
}

void CallLog::Acknowledged(absl::string_view id, absl::string_view payload) {
  const std::string line =
      absl::StrCat(id, "\t", PayloadHash(payload), "\t", payload.size(), "\n");
  absl::MutexLock lock(&mu_);
  if (acked_.is_open()) acked_ << line;
}

void CallLog::Failed(absl::Time when, absl::string_view op, absl::StatusCode code,
                     absl::string_view id) {
  const std::string line = absl::StrCat(absl::ToUnixMillis(when), ",", op, ",",
                                        absl::StatusCodeToString(code), ",", id, "\n");
  absl::MutexLock lock(&mu_);
  if (errors_.is_open()) errors_ << line;
}

absl::Status CallLog::Close() {
  absl::MutexLock lock(&mu_);
  bool ok = true;
  for (std::ofstream* out : {&acked_, &errors_}) {
    if (!out->is_open()) continue;
    out->close();
    ok = ok && !out->fail();
  }
  return ok ? absl::OkStatus() : absl::DataLossError("cannot write the call log");
}

}  // namespace dictlog::bench
