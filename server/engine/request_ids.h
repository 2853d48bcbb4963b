// Client request ids of appends (retry safety, docs/adr/0008-request-ids.md): the
// fingerprint that tells a retry from another request reusing its id, the compact form
// of the ids an append returned, and the set of request ids being appended right now
// (a retry that arrives while its first attempt still runs waits for it).
//
// Thread safety: the functions are pure; InFlightRequests may be used concurrently.
#ifndef DICTLOG_SERVER_ENGINE_REQUEST_IDS_H_
#define DICTLOG_SERVER_ENGINE_REQUEST_IDS_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"
#include "server/engine/append_input.h"
#include "server/store/catalog.pb.h"

namespace dictlog::engine {

// A 64-bit hash of the records (categories, payloads and their boundaries), the same
// in every process and version: it is stored.
uint64_t RequestFingerprint(absl::Span<const AppendInput> records);

// Appends (pool_id, seq) to `entry`'s runs, extending the last run when it continues it.
void AddToIdRuns(uint32_t pool_id, uint64_t seq, storage::AppendedRequest* entry);

class InFlightRequests {
 public:
  // Holds a request id until destroyed.
  class Slot {
   public:
    Slot(InFlightRequests* owner, std::string id) : owner_(owner), id_(std::move(id)) {}
    Slot(const Slot&) = delete;
    Slot& operator=(const Slot&) = delete;
    ~Slot() { owner_->Release(id_); }

   private:
    InFlightRequests* const owner_;
    const std::string id_;
  };

  // Waits until no other Slot holds `id`, then holds it. The slot must not outlive
  // this object.
  std::unique_ptr<Slot> Acquire(absl::string_view id) ABSL_LOCKS_EXCLUDED(mu_);
  // Blocks until `n` callers wait in Acquire or `timeout` passes; true if they do.
  bool WaitForWaitersForTest(int n, absl::Duration timeout) ABSL_LOCKS_EXCLUDED(mu_);

 private:
  void Release(const std::string& id) ABSL_LOCKS_EXCLUDED(mu_);

  absl::Mutex mu_;
  absl::CondVar released_;
  absl::flat_hash_set<std::string> held_ ABSL_GUARDED_BY(mu_);
  int waiting_ ABSL_GUARDED_BY(mu_) = 0;  // Callers of Acquire waiting for a release.
};

}  // namespace dictlog::engine

#endif  // DICTLOG_SERVER_ENGINE_REQUEST_IDS_H_
