// Where a Backup may write: a new directory strictly inside the server's backup root
// (dictlogd --backup_root). The checkpoint is written by the daemon, which can write
// more than the operator meant callers to reach (and RocksDB clears `<dir>.tmp` before
// it starts), so the requested directory is confined: `..` and symbolic links of its
// existing parent are resolved first, and a symbolic link as the directory itself or
// as its `<dir>.tmp` is refused. What is checked is the state at the time of the call:
// whoever can rename directories under the root while a backup starts is trusted.
//
// Thread safety: a free function; it only reads the file system.
#ifndef DICTLOG_SERVER_ENGINE_BACKUP_ROOT_H_
#define DICTLOG_SERVER_ENGINE_BACKUP_ROOT_H_

#include <string>

#include "absl/status/statusor.h"

namespace dictlog::engine {

// The resolved absolute path of `dir` if it lies strictly inside `root`.
// FAILED_PRECONDITION if `root` is empty (backups are off) or does not exist, or the
// parent of `dir` does not exist; INVALID_ARGUMENT if `dir` is empty or relative;
// PERMISSION_DENIED if it resolves outside `root` (or is `root` itself), or it or its
// `<dir>.tmp` is a symbolic link.
absl::StatusOr<std::string> ConfineBackupDir(const std::string& root,
                                             const std::string& dir);

}  // namespace dictlog::engine

#endif  // DICTLOG_SERVER_ENGINE_BACKUP_ROOT_H_
