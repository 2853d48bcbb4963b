// Input files of training and of everything that reads log samples (dict_trainer,
// benchmarks, tests): finding the input files (a directory stands for its regular
// files), splitting text into records (one per line), reading a file, and reading
// every *.log file of a directory (the loghub samples) as lines. Stateless; safe to
// call from several threads.
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

// How ReadLines splits a file: as AppendLines ('\n' ends a line and is not part of
// it; a '\r' before it is kept, so CRLF lines end in '\r'), then:
struct LineOptions {
  // Leave out empty lines. Default false: an empty line is a record too.
  bool skip_empty = false;
};

// The lines of the file at `path`; errors as ReadFile's.
absl::StatusOr<std::vector<std::string>> ReadLines(const std::string& path,
                                                   const LineOptions& options = {});

// The "*.log" regular files directly in `dir` (not recursive), sorted by name;
// errors as ExpandInputs' for a directory (none found is not an error).
absl::StatusOr<std::vector<std::string>> ListLogFiles(const std::string& dir);

// One *.log file and its lines.
struct LogFile {
  std::string path;
  std::string name;  // The file name without ".log": "HDFS" for .../HDFS.log.
  std::vector<std::string> lines;
};

// Every file of ListLogFiles(dir), in that order, read with ReadLines.
absl::StatusOr<std::vector<LogFile>> ReadLogFiles(const std::string& dir,
                                                  const LineOptions& options = {});

}  // namespace dictlog::trainer

#endif  // DICTLOG_TRAINING_FILES_H_
