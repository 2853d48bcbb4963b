// The open-files limit dictlogd runs under. RocksDB keeps every table file open by
// default (max_open_files -1): under a shell's usual soft limit of 1024, a store of
// about a thousand table files (8 MiB each, some 8 GB) failed its next flush with
// "Too many open files", and then every write until a restart. dictlogd therefore lifts
// its soft limit to the hard one at start-up, and gives RocksDB at most half of it.
//
// Thread safety: RaiseOpenFilesLimit changes the process's limit (call it once, at
// start-up); TableFilesFor is a pure function.
#ifndef DICTLOG_SERVER_DAEMON_OPEN_FILES_H_
#define DICTLOG_SERVER_DAEMON_OPEN_FILES_H_

#include <cstdint>

#include "absl/status/statusor.h"

namespace dictlog::service {

// Lifts the soft RLIMIT_NOFILE to the hard limit; returns the soft limit now in force
// (UINT64_MAX: unlimited). If the kernel refuses, the limit stays and is returned.
// INTERNAL only if the limit cannot be read.
absl::StatusOr<uint64_t> RaiseOpenFilesLimit();

// The table files RocksDB may keep open (Store::Options::max_open_files) under an
// open-files limit of `limit`: half of it, the other half left to connections, WALs
// and the rest; at least 32; -1 (every file) when the limit is unlimited or so large
// that half of it exceeds what an int holds.
int TableFilesFor(uint64_t limit);

}  // namespace dictlog::service

#endif  // DICTLOG_SERVER_DAEMON_OPEN_FILES_H_
