// Command-line parsing of dictlog's binaries (dictlog, dictlogd, dictlog-bench,
// dict_trainer): absl flags with the exit statuses README.md documents. `--help`
// (and --helpfull, --helpshort, --help=SUBSTRING) prints the usage text and the main
// file's flags and exits 0; `--version` prints VersionLine and exits 0; an unknown
// flag, a missing or malformed value exits 2 (usage error) after naming the flag.
// Startup only: not thread-safe.
#ifndef DICTLOG_COMMON_COMMAND_LINE_H_
#define DICTLOG_COMMON_COMMAND_LINE_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace dictlog {

// dictlog's version, shared by all its binaries.
inline constexpr char kDictlogVersion[] = "0.17.0";

// A library a binary runs with and the version it reports at run time (e.g. zstd's
// ZSTD_versionString(), not the header's).
struct LibraryVersion {
  std::string name;
  std::string version;
};

// "PROGRAM (dictlog 0.17.0): zstd 1.5.4, gRPC 1.51.1": what --version prints.
std::string VersionLine(absl::string_view program, const std::vector<LibraryVersion>& libraries);

struct ProgramInfo {
  // Workspace path of the file defining the flags --help lists, e.g. "client/cli/main.cc".
  const char* main_file = "";
  // Printed before the flags by --help.
  std::string usage;
  // Listed by --version after dictlog's version.
  std::vector<LibraryVersion> libraries;
};

// Parses argv into the flags; returns the positional arguments, program name first.
// Exits (see above) for --help, --version and flag errors.
std::vector<char*> ParseCommandLine(int argc, char** argv, const ProgramInfo& program);

// The first error absl would report for these arguments (an unknown flag, a value
// missing or not of the flag's type), as "unknown flag --x"; empty if none. Exposed
// for tests. Arguments after "--flagfile", "--fromenv", "--tryfromenv" or "--undefok"
// are left to absl.
std::string FirstFlagError(int argc, char** argv);

}  // namespace dictlog

#endif  // DICTLOG_COMMON_COMMAND_LINE_H_
