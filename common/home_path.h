// A leading "~/" in a path flag, as a shell would expand it: the shell does not after
// `--flag=`, so `--token_file=~/.dictlog-token` reached the binaries as is. Startup
// only (reads $HOME): not thread-safe.
#ifndef DICTLOG_COMMON_HOME_PATH_H_
#define DICTLOG_COMMON_HOME_PATH_H_

#include <initializer_list>
#include <string>

#include "absl/flags/flag.h"
#include "absl/strings/string_view.h"

namespace dictlog {

// `path` with a leading "~/" (or a whole "~") replaced by $HOME; unchanged if it has
// none ("~user/" included), or if $HOME is unset or empty.
std::string ExpandHome(absl::string_view path);

// Applies ExpandHome to each flag's value. Call once, right after parsing, with the
// binary's path flags.
void ExpandHomeInFlags(std::initializer_list<absl::Flag<std::string>*> flags);

}  // namespace dictlog

#endif  // DICTLOG_COMMON_HOME_PATH_H_
