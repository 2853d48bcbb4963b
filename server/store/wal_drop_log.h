// WalDropLog: RocksDB's info log (the rolling LOG file RocksDB would otherwise make
// itself), with a tap on what write-ahead log recovery drops.
//
// In kPointInTimeRecovery, RocksDB's default, an open that meets a damaged or cut record
// in a WAL stops replaying there and opens: the writes logged from it on are gone, and
// all it says is a WARN line in LOG ("<file>: dropping N bytes; <why>", the reporter's
// text since leveldb; N covers the stretch it gave up on, not the rest of the log). A
// record cut short at the end of the file (a power loss during a write) is reported
// too ("truncated record body"); a log cut at a record boundary is not. This wrapper
// forwards every line and adds up those reports, so the store can say an open dropped
// writes.
//
// Thread safety: RocksDB logs from any thread; all methods may be called concurrently.
#ifndef DICTLOG_SERVER_STORE_WAL_DROP_LOG_H_
#define DICTLOG_SERVER_STORE_WAL_DROP_LOG_H_

#include <cstdarg>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "rocksdb/env.h"
#include "server/store/wal_drops.h"

namespace dictlog::store {

class WalDropLog : public rocksdb::LoggerWrapper {
 public:
  explicit WalDropLog(std::shared_ptr<rocksdb::Logger> target);

  void Logv(const rocksdb::InfoLogLevel level, const char* format, va_list ap) override;
  void Logv(const char* format, va_list ap) override;

  WalDrops drops() const ABSL_LOCKS_EXCLUDED(mu_);

  // The bytes a formatted line reports dropped, or -1 if it is not such a report.
  static int64_t DroppedBytes(absl::string_view line);

 private:
  void Tap(const char* format, va_list ap) ABSL_LOCKS_EXCLUDED(mu_);

  const std::shared_ptr<rocksdb::Logger> target_;
  mutable absl::Mutex mu_;
  WalDrops drops_ ABSL_GUARDED_BY(mu_);
};

}  // namespace dictlog::store

#endif  // DICTLOG_SERVER_STORE_WAL_DROP_LOG_H_
