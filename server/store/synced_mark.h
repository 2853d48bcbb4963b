// SyncedMark: the file DICTLOG-SYNCED beside a store's RocksDB files. It holds a lower
// bound of the RocksDB sequence number of the newest synced write the store
// acknowledged (the writes that give out an id: pools, dictionaries, tombstones, seq
// and dictionary id leases; ADR 0044). A synced write cannot be lost to a power loss,
// so if a store opens with a last sequence below the mark, writes were lost that only
// damage explains: a write-ahead log deleted, cut, or damaged (the cases RocksDB's
// replay does not always report: a deleted log, a log cut between two records).
//
// Format: 16 bytes, `sequence:u64be check:u64be`, check = sequence ^ kCheck, written
// in place. Not fdatasync'ed (that cost 39% of the pool creations a second; the
// file's creation does sync the directory): the kernel writes it back within
// seconds, and a power loss can only take it back to an older, lower mark, which
// weakens the check and never makes it claim a loss, since every mark is raised after
// its write was fsynced. A file that does not check reads as DATA_LOSS.
//
// Thread safety: Raise may be called concurrently; Read is a free function.
#ifndef DICTLOG_SERVER_STORE_SYNCED_MARK_H_
#define DICTLOG_SERVER_STORE_SYNCED_MARK_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

namespace dictlog::store {

class SyncedMark {
 public:
  static constexpr char kFileName[] = "DICTLOG-SYNCED";

  // The mark in `dir`: nullopt if there is none (a store from before it, a backup's
  // copy); DATA_LOSS if it does not check; UNAVAILABLE if it cannot be read.
  static absl::StatusOr<std::optional<uint64_t>> Read(const std::string& dir);

  // Writes nothing until the first Raise, which replaces whatever the file held.
  explicit SyncedMark(std::string dir);
  ~SyncedMark();
  SyncedMark(const SyncedMark&) = delete;
  SyncedMark& operator=(const SyncedMark&) = delete;

  // Records that a synced write of sequence `sequence` or above was acknowledged:
  // writes the file unless a Raise since construction wrote as much.
  // UNAVAILABLE if the file cannot be written.
  absl::Status Raise(uint64_t sequence) ABSL_LOCKS_EXCLUDED(mu_);

 private:
  absl::Status OpenLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::string dir_;
  absl::Mutex mu_;
  int fd_ ABSL_GUARDED_BY(mu_) = -1;
  uint64_t raised_ ABSL_GUARDED_BY(mu_) = 0;  // 0: nothing written since construction.
};

}  // namespace dictlog::store

#endif  // DICTLOG_SERVER_STORE_SYNCED_MARK_H_
