// Replacing a file so that readers see its old content or all of the new one, never
// half: the one copy of "write a temporary file, sync it, rename it over the target"
// (the dictionary exports of dict_trainer and the CLI, port files, benchmark stats).
// Stateless; safe to call from several threads on different paths.
#ifndef DICTLOG_COMMON_ATOMIC_FILE_H_
#define DICTLOG_COMMON_ATOMIC_FILE_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace dictlog {

// Writes `contents` to `path`.tmp, fsyncs it, renames it over `path` and fsyncs the
// directory, so that after a crash `path` holds either its old content or all of
// `contents`. When `path` exists and is not a regular file (a device such as
// /dev/null, a FIFO, a symlink), `contents` is written into it in place instead: a
// rename would replace the device or the link itself. On failure the errno-derived
// code (NOT_FOUND for a missing directory, PERMISSION_DENIED, ...) with the path in
// the message; a regular `path` is then untouched and no temporary file is left.
absl::Status WriteFileAtomically(const std::string& path, absl::string_view contents);

}  // namespace dictlog

#endif  // DICTLOG_COMMON_ATOMIC_FILE_H_
