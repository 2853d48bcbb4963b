// BackgroundErrors: a RocksDB event listener that remembers why RocksDB stopped the
// store's writes, and keeps RocksDB from recovering by itself.
//
// RocksDB stops every write after a background flush, compaction or log write fails
// (a "hard" or worse error): a full disk, an I/O error, or a compaction that meets a
// damaged table block, which no resume gets past (docs/operations.md, "Writes
// stopped"). Reads go on. Its automatic recovery is turned off: on a full disk it
// retried at once, failed again and made the error fatal until a reopen (measured with
// FaultInjectionFs; docs/reliability.md "Disk full"); Store::ResumeIfStopped resumes on
// a later write instead, once there is room, and then calls Clear.
//
// Thread safety: RocksDB calls the listener from its own threads (holding its database
// mutex: the callbacks only take a short lock here); Stopped and Clear may be called
// from any thread.
#ifndef DICTLOG_SERVER_STORE_BACKGROUND_ERRORS_H_
#define DICTLOG_SERVER_STORE_BACKGROUND_ERRORS_H_

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "rocksdb/listener.h"

namespace dictlog::store {

class BackgroundErrors : public rocksdb::EventListener {
 public:
  const char* Name() const override { return "dictlog.BackgroundErrors"; }
  // Remembers an error that stops writes (severity hard or worse) and prints a WARNING
  // to stderr; leaves `error` as it is.
  void OnBackgroundError(rocksdb::BackgroundErrorReason reason,
                         rocksdb::Status* error) override ABSL_LOCKS_EXCLUDED(mu_);
  void OnErrorRecoveryBegin(rocksdb::BackgroundErrorReason, rocksdb::Status,
                            bool* auto_recovery) override {
    *auto_recovery = false;
  }

  // Why writes are stopped ("writes stopped after a failed compaction: ...", the
  // code as FromRocks gives it: DATA_LOSS for a damaged table), or OK.
  absl::Status Stopped() const ABSL_LOCKS_EXCLUDED(mu_);
  // After a successful resume.
  void Clear() ABSL_LOCKS_EXCLUDED(mu_);

  // What failed, in words: "flush", "compaction", "write-ahead log write", ...
  static absl::string_view ReasonName(rocksdb::BackgroundErrorReason reason);

 private:
  mutable absl::Mutex mu_;
  absl::Status stopped_ ABSL_GUARDED_BY(mu_);
};

}  // namespace dictlog::store

#endif  // DICTLOG_SERVER_STORE_BACKGROUND_ERRORS_H_
