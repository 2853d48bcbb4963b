// FaultInjectionFs (tests only): a rocksdb::FileSystemWrapper over a real file system
// that simulates power loss and a full disk (the idea of leveldb's
// db/fault_injection_test.cc; our own code).
//
// Power loss: every file written through it remembers how many of its bytes were
// synced (Sync/Fsync; RangeSync does not count) and whether its directory was fsynced
// since it was created. PowerOff() freezes the disk: from then on every write, sync,
// create, rename and delete fails with an IOError, so whatever still runs (a store
// being abandoned) cannot change what "survived". Then, once the store is gone,
// RestorePower() truncates every file to its synced size, deletes the files created
// after their directory's last fsync, and lets writes through again. Renames and
// deletes done before PowerOff() are kept (an optimistic model: they are not undone).
//
// Disk full: SetFreeBytes(n) lets n more bytes be appended; the append that crosses the
// limit writes the part that fits and fails with NoSpace, as write(2) does on ENOSPC;
// creating a file fails with NoSpace while none are left, and GetFreeSpace reports
// what is left. ClearSpaceLimit() ends it.
//
// Thread safety: all methods may be called concurrently (one mutex).
#ifndef DICTLOG_SERVER_STORE_FAULT_INJECTION_FS_H_
#define DICTLOG_SERVER_STORE_FAULT_INJECTION_FS_H_

#include <rocksdb/file_system.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace dictlog::store {

class FaultInjectionFs : public rocksdb::FileSystemWrapper {
 public:
  // Wraps `target` (default: the process's real file system).
  explicit FaultInjectionFs(
      std::shared_ptr<rocksdb::FileSystem> target = rocksdb::FileSystem::Default());

  const char* Name() const override { return "FaultInjectionFs"; }

  // Power loss (see above). RestorePower() returns how many bytes it dropped and how
  // many files it deleted.
  void PowerOff();
  struct DropStats {
    uint64_t bytes_dropped = 0;
    uint64_t files_deleted = 0;
  };
  DropStats RestorePower();

  // Disk full (see above).
  void SetFreeBytes(uint64_t bytes);
  void ClearSpaceLimit();
  // Appends refused for lack of space since construction.
  uint64_t no_space_errors() const;

  // FileSystem overrides.
  rocksdb::IOStatus NewWritableFile(const std::string& fname,
                                    const rocksdb::FileOptions& options,
                                    std::unique_ptr<rocksdb::FSWritableFile>* result,
                                    rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus ReopenWritableFile(const std::string& fname,
                                       const rocksdb::FileOptions& options,
                                       std::unique_ptr<rocksdb::FSWritableFile>* result,
                                       rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus ReuseWritableFile(const std::string& fname,
                                      const std::string& old_fname,
                                      const rocksdb::FileOptions& options,
                                      std::unique_ptr<rocksdb::FSWritableFile>* result,
                                      rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus NewDirectory(const std::string& name,
                                 const rocksdb::IOOptions& options,
                                 std::unique_ptr<rocksdb::FSDirectory>* result,
                                 rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus GetFreeSpace(const std::string& path, const rocksdb::IOOptions& options,
                                 uint64_t* free_bytes, rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus DeleteFile(const std::string& fname, const rocksdb::IOOptions& options,
                               rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus RenameFile(const std::string& src, const std::string& target,
                               const rocksdb::IOOptions& options,
                               rocksdb::IODebugContext* dbg) override;

  // Called by the wrapped files and directories.
  rocksdb::IOStatus OnAppend(const std::string& fname, uint64_t size, uint64_t* allowed);
  rocksdb::IOStatus OnSync(const std::string& fname);
  rocksdb::IOStatus OnTruncate(const std::string& fname, uint64_t size);
  rocksdb::IOStatus OnDirectorySync(const std::string& dir);

 private:
  struct FileState {
    uint64_t size = 0;         // Bytes written through us.
    uint64_t synced_size = 0;  // Of those, bytes synced.
    bool dir_synced = false;   // Its directory fsynced since it was created.
  };

  rocksdb::IOStatus CheckWritable() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  rocksdb::IOStatus Track(const std::string& fname, uint64_t existing_size,
                          bool created, std::unique_ptr<rocksdb::FSWritableFile>* result);

  mutable absl::Mutex mu_;
  bool powered_off_ ABSL_GUARDED_BY(mu_) = false;
  std::optional<uint64_t> free_bytes_ ABSL_GUARDED_BY(mu_);  // nullopt: no limit.
  uint64_t no_space_errors_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<std::string, FileState> files_ ABSL_GUARDED_BY(mu_);
};

}  // namespace dictlog::store

#endif  // DICTLOG_SERVER_STORE_FAULT_INJECTION_FS_H_
