// ReplicatedLog: where LogEngine sends appends in cluster mode (docs/cluster.md,
// ADR 0017) instead of writing them itself. The engine validates, admits names and
// routes as in single-node mode, then hands the batch to Append, which answers once
// the log has acknowledged it (all or none), with each record's seq. A materializer
// applies the log back into the engine (LogEngine::ApplyLogged). Reads ask
// AwaitApplied first, so an acknowledged id is never NOT_FOUND because this node has
// not applied it yet. server/cluster implements it; the daemon wires it.
//
// Thread safety: implementations are called concurrently from any thread.
#ifndef DICTLOG_SERVER_ENGINE_REPLICATED_LOG_H_
#define DICTLOG_SERVER_ENGINE_REPLICATED_LOG_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "server/engine/append_input.h"
#include "server/store/store.h"

namespace dictlog::engine {

// One validated append as the log carries it.
struct LogAppend {
  absl::Span<const AppendInput> records;
  std::vector<std::string> pools;  // The pool of each record (routed by the writer).
  absl::string_view request_id;    // May be empty.
  absl::string_view principal;
  int64_t append_unix_ms = 0;      // The writer's time of the call.
};

// One message of the log to apply: a LogAppend plus the seqs the log gave its records
// and where it lies in the log (written with the records).
struct LoggedBatch {
  std::vector<AppendInput> records;
  std::vector<std::string> pools;
  std::vector<uint64_t> seqs;
  std::string request_id;
  std::string principal;
  int64_t append_unix_ms = 0;
  store::LogPosition position;
};

class ReplicatedLog {
 public:
  virtual ~ReplicatedLog() = default;

  // Appends the records as one message; returns their seqs in input order once the
  // log acknowledged it. Nothing is acknowledged on error.
  virtual absl::StatusOr<std::vector<uint64_t>> Append(const LogAppend& append) = 0;
  // OK once record `seq` of `pool` (if it exists) is applied on this node; waits a
  // bounded time, then UNAVAILABLE.
  virtual absl::Status AwaitApplied(absl::string_view pool, uint64_t seq) const = 0;
  // AwaitApplied without waiting.
  virtual absl::Status CheckApplied(absl::string_view pool, uint64_t seq) const = 0;
};

}  // namespace dictlog::engine

#endif  // DICTLOG_SERVER_ENGINE_REPLICATED_LOG_H_
