// File helpers of the dict_trainer CLI: finding the input files (a directory stands
// for its regular files), splitting a file into records (one per line), and
// replacing a file atomically. Stateless; safe to call from several threads on
// different paths.
#ifndef DICTLOG_TRAINING_FILES_H_
#define DICTLOG_TRAINING_FILES_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace dictlog::trainer {

// The files to read for `inputs`, in order: a file is itself, a directory is every
// regular file directly in it (not recursive), sorted by name. NOT_FOUND if an input
// does not exist, INVALID_ARGUMENT if it is neither a regular file nor a directory,
// and the errno-derived code if a directory cannot be listed.
absl::StatusOr<std::vector<std::string>> ExpandInputs(
    const std::vector<std::string>& inputs);

// Appends each line of `text` to *records: '\n' ends a line and is not part of it,
// every other byte is kept, and a last line without '\n' is a record too.
void AppendLines(absl::string_view text, std::vector<std::string>* records);

// The whole content of `path`; the errno-derived code (NOT_FOUND, PERMISSION_DENIED,
// ...) with the path in the message if it cannot be read.
absl::StatusOr<std::string> ReadFile(const std::string& path);

}  // namespace dictlog::trainer

#endif  // DICTLOG_TRAINING_FILES_H_
