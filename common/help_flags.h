// Help output of dictlog's binaries: `--help` lists the flags defined in the given
// main file (absl's default looks for a file named after the program). Call once from
// main() before absl::ParseCommandLine. Not thread-safe (startup only).
#ifndef DICTLOG_COMMON_HELP_FLAGS_H_
#define DICTLOG_COMMON_HELP_FLAGS_H_

#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/match.h"
#include "absl/strings/string_view.h"

namespace dictlog {

// `main_file` is the workspace path of the file holding the flags, e.g.
// "client/cli/main.cc"; `usage` is the text printed before them.
inline void SetHelp(const char* main_file, absl::string_view usage) {
  absl::SetProgramUsageMessage(usage);
  absl::FlagsUsageConfig config;
  config.contains_help_flags = [main_file](absl::string_view file) {
    return absl::EndsWith(file, main_file);
  };
  config.contains_helpshort_flags = config.contains_help_flags;
  absl::SetFlagsUsageConfig(config);
}

}  // namespace dictlog

#endif  // DICTLOG_COMMON_HELP_FLAGS_H_
