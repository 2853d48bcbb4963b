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

// A record as the writer encoded it (ADR 0020): `framed`, its stored body (a
// magicless zstd frame) with the frame's dictionary id (0: none) and payload size;
// otherwise it did not shrink and its payload travels as it is.
struct EncodedRecord {
  bool framed = false;
  std::string frame;
  uint32_t dictionary_id = 0;
  uint64_t raw_size = 0;
};

// One validated append as the log carries it.
struct LogAppend {
  absl::Span<const AppendInput> records;
  std::vector<std::string> pools;  // The pool of each record (routed by the writer).
  std::vector<EncodedRecord> encoded;  // One per record: what every node stores.
  absl::string_view request_id;    // May be empty.
  absl::string_view principal;
  uint64_t request_fingerprint = 0;  // With a request id: RequestFingerprint(records).
  int64_t append_unix_ms = 0;      // The writer's time of the call.
};

// A dictionary, or an activation, to put in the log (ADR 0020).
struct LogDictionary {
  std::string pool;
  std::string content;  // A zstd dictionary; empty: activate dictionary `id` alone.
  uint32_t id = 0;      // An activation's dictionary (a new one's id comes from its content).
  bool activate = false;
  uint32_t base_id = 0;  // Activate only if the pool's active one is this (0: none).
  std::string source;
  int64_t created_unix_ms = 0;
  std::string evaluation;  // A serialized storage::DictionaryEvaluation; may be empty.
};

// What one node made of a logged dictionary message: the id it is stored under, and
// whether its activation took effect there.
struct AppliedDictionary {
  uint32_t id = 0;
  bool activated = false;
};

// One message of the log to apply: a LogAppend plus the seqs the log gave its records
// and where it lies in the log (written with the records).
struct LoggedBatch {
  std::vector<AppendInput> records;  // Payloads empty where `encoded` holds a frame.
  std::vector<std::string> pools;
  std::vector<uint64_t> seqs;
  // Empty: a message of ADR 0017's writers, encoded here; else one per record.
  std::vector<EncodedRecord> encoded;
  std::string request_id;
  std::string principal;
  uint64_t request_fingerprint = 0;  // 0: computed from the payloads.
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
  // Puts a dictionary or an activation into the log and answers once this node
  // applied it, with what it made of it. UNIMPLEMENTED by default.
  virtual absl::StatusOr<AppliedDictionary> AppendDictionary(const LogDictionary& dictionary) {
    return absl::UnimplementedError("this log carries no dictionaries");
  }
  // Whether this node trains `pool`'s dictionaries automatically. Default: yes.
  virtual bool TrainsHere(absl::string_view pool) const { return true; }
};

}  // namespace dictlog::engine

#endif  // DICTLOG_SERVER_ENGINE_REPLICATED_LOG_H_
