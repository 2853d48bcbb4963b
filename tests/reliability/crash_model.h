// CrashModel (crash test only): what the crash test sent to dictlogd and what the
// server acknowledged, the std::map model every check compares the store against.
//
// Every append call of the test is one *batch* (an Append is a batch of one), named by
// a BatchKey. Each record's payload starts with a header naming its batch, its index in
// the batch and the batch size, so a record found by a Scan after a crash can be traced
// back to the call that sent it:
//
//   payload := "crash c=<cycle> w=<writer> b=<batch> i=<index> n=<size> | " text
//
// A batch is kInFlight from the moment it is sent until the server acknowledges it
// (kAcked) or a check after the restart decides its fate: found whole (kAcked, with the
// ids the Scan saw), not found at all (kDropped: it must never appear later), or found
// in part (kBroken: reported once, then ignored).
//
// Thread safety: Sent() and Acked() may be called from many writer threads at once;
// everything else is for the one checking thread while no writer runs.
#ifndef DICTLOG_TESTS_RELIABILITY_CRASH_MODEL_H_
#define DICTLOG_TESTS_RELIABILITY_CRASH_MODEL_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"

namespace dictlog::crash {

struct BatchKey {
  uint32_t cycle = 0;
  uint32_t writer = 0;
  uint32_t batch = 0;

  friend bool operator<(const BatchKey& a, const BatchKey& b) {
    return std::tie(a.cycle, a.writer, a.batch) < std::tie(b.cycle, b.writer, b.batch);
  }
  friend bool operator==(const BatchKey& a, const BatchKey& b) {
    return std::tie(a.cycle, a.writer, a.batch) == std::tie(b.cycle, b.writer, b.batch);
  }
};

// The header fields a payload carries.
struct PayloadHeader {
  BatchKey key;
  uint32_t index = 0;
  uint32_t size = 0;
};

// The payload of record `index` of a batch of `size`, ending in `text`.
std::string MakePayload(const PayloadHeader& header, absl::string_view text);
// The header of a payload made by MakePayload; nullopt if it has none.
std::optional<PayloadHeader> ParsePayload(absl::string_view payload);

struct SentRecord {
  std::string category;
  std::string payload;
};

enum class BatchState { kInFlight, kAcked, kDropped, kBroken };

struct SentBatch {
  std::vector<SentRecord> records;
  BatchState state = BatchState::kInFlight;
  // One id per record once kAcked.
  std::vector<std::string> ids;
};

class CrashModel {
 public:
  CrashModel() = default;
  CrashModel(const CrashModel&) = delete;
  CrashModel& operator=(const CrashModel&) = delete;

  // Records a batch about to be sent. Call before the RPC.
  void Sent(const BatchKey& key, std::vector<SentRecord> records) ABSL_LOCKS_EXCLUDED(mu_);
  // Records the server's acknowledgement. INTERNAL if the ids do not match the batch
  // (count; the batch is then kBroken) or an id was already acknowledged for another
  // record (the batch stays acknowledged).
  absl::Status Acked(const BatchKey& key, std::vector<std::string> ids)
      ABSL_LOCKS_EXCLUDED(mu_);

  // The checking thread's view: read the batches only while no writer runs. Pointers
  // stay valid for the model's life.
  const SentBatch* Find(const BatchKey& key) const ABSL_LOCKS_EXCLUDED(mu_);
  // Every batch, by key.
  std::vector<std::pair<BatchKey, const SentBatch*>> Batches() const
      ABSL_LOCKS_EXCLUDED(mu_);
  // Settles an in-flight batch after a restart: kAcked with `ids` (found whole),
  // kDropped (ids empty) or kBroken. INTERNAL as Acked() for kAcked.
  absl::Status Settle(const BatchKey& key, BatchState state, std::vector<std::string> ids)
      ABSL_LOCKS_EXCLUDED(mu_);

  uint64_t acked_records() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  mutable absl::Mutex mu_;
  std::map<BatchKey, SentBatch> batches_ ABSL_GUARDED_BY(mu_);
  // Every acknowledged id -> its batch, to catch an id handed out twice.
  absl::flat_hash_map<std::string, BatchKey> owner_ ABSL_GUARDED_BY(mu_);
  uint64_t acked_records_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace dictlog::crash

#endif  // DICTLOG_TESTS_RELIABILITY_CRASH_MODEL_H_
