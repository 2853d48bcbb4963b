#include "common/command_line.h"

#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "absl/container/flat_hash_set.h"
#include "absl/flags/commandlineflag.h"
#include "absl/flags/internal/usage.h"
#include "absl/flags/parse.h"
#include "absl/flags/reflection.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace dictlog {
namespace {

// absl's own flags: their values are checked by absl.
bool IsUsageFlag(absl::string_view name) {
  static const auto* const kNames = new absl::flat_hash_set<absl::string_view>{
      "help", "helpfull", "helpshort", "helppackage", "version", "only_check_args"};
  return kNames->contains(name);
}

// Flags that read more flags from elsewhere or relax the checks.
bool IsIndirectFlag(absl::string_view name) {
  return name == "flagfile" || name == "fromenv" || name == "tryfromenv" ||
         name == "undefok";
}

// The error of the flag argument argv[*i] (which may consume the next argument).
std::string FlagError(int argc, char** argv, int* i) {
  absl::string_view arg = argv[*i];
  arg.remove_prefix(absl::StartsWith(arg, "--") ? 2 : 1);
  const size_t eq = arg.find('=');
  const absl::string_view name = arg.substr(0, eq);
  const bool has_value = eq != absl::string_view::npos;
  absl::string_view value = has_value ? arg.substr(eq + 1) : absl::string_view();
  if (IsUsageFlag(name)) return "";
  absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
  if (flag == nullptr && absl::StartsWith(name, "no")) {
    absl::CommandLineFlag* positive = absl::FindCommandLineFlag(name.substr(2));
    if (positive != nullptr && positive->IsOfType<bool>()) {
      if (has_value) return absl::StrCat("--", name, " takes no value");
      return "";
    }
  }
  if (flag == nullptr || flag->IsRetired()) return absl::StrCat("unknown flag --", name);
  if (!has_value) {
    if (flag->IsOfType<bool>()) return "";
    if (*i + 1 >= argc) return absl::StrCat("--", name, " needs a value");
    value = argv[++*i];
  }
  // Sets the flag as absl will again; only the error matters here.
  std::string error;
  if (!flag->ParseFrom(value, &error)) {
    return absl::StrCat("--", name, "=", value, ": ", error);
  }
  return "";
}

}  // namespace

std::string VersionLine(absl::string_view program,
                        const std::vector<LibraryVersion>& libraries) {
  std::string line = absl::StrCat(program, " (dictlog ", kDictlogVersion, ")");
  if (libraries.empty()) return line;
  return absl::StrCat(line, ": ",
                      absl::StrJoin(libraries, ", ", [](std::string* out, const LibraryVersion& l) {
                        absl::StrAppend(out, l.name, " ", l.version);
                      }));
}

std::string FirstFlagError(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const absl::string_view arg = argv[i];
    if (arg == "--") break;
    if (arg.size() < 2 || arg[0] != '-') continue;  // Positional, or "-" (stdin).
    absl::string_view name = arg.substr(absl::StartsWith(arg, "--") ? 2 : 1);
    if (IsIndirectFlag(name.substr(0, name.find('=')))) return "";
    std::string error = FlagError(argc, argv, &i);
    if (!error.empty()) return error;
  }
  return "";
}

std::vector<char*> ParseCommandLine(int argc, char** argv, const ProgramInfo& program) {
  const std::string name = std::filesystem::path(argc > 0 ? argv[0] : "").filename();
  absl::SetProgramUsageMessage(program.usage);
  absl::FlagsUsageConfig config;  // Replaces the whole configuration: set all of it.
  config.contains_help_flags = [main_file = program.main_file](absl::string_view file) {
    return absl::EndsWith(file, main_file);
  };
  config.contains_helpshort_flags = config.contains_help_flags;
  config.version_string = [line = VersionLine(name, program.libraries)] {
    return line + "\n";
  };
  absl::SetFlagsUsageConfig(config);
  if (std::string error = FirstFlagError(argc, argv); !error.empty()) {
    std::cerr << name << ": " << error << " (see --help)\n";
    std::exit(2);
  }
  // absl 20220623 exits 1 after --help; handle the usage flags here instead.
  std::vector<char*> positional = absl::flags_internal::ParseCommandLineImpl(
      argc, argv, absl::flags_internal::ArgvListAction::kRemoveParsedArgs,
      absl::flags_internal::UsageFlagsAction::kIgnoreUsage,
      absl::flags_internal::OnUndefinedFlag::kAbortIfUndefined);
  const int usage = absl::flags_internal::HandleUsageFlags(std::cout, absl::ProgramUsageMessage());
  if (usage >= 0) {
    std::cout.flush();
    std::exit(0);  // --help, --version, --only_check_args: done, successfully.
  }
  return positional;
}

}  // namespace dictlog
