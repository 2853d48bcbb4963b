#include "common/home_path.h"

#include <cstdlib>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace dictlog {

std::string ExpandHome(absl::string_view path) {
  if (path != "~" && !absl::StartsWith(path, "~/")) return std::string(path);
  const char* home = std::getenv("HOME");
  if (home == nullptr || *home == '\0') return std::string(path);
  std::string base = home;
  while (base.size() > 1 && base.back() == '/') base.pop_back();
  if (path == "~") return base;
  if (base == "/") base.clear();  // "~/x" is "/x", not "//x".
  return absl::StrCat(base, path.substr(1));
}

void ExpandHomeInFlags(std::initializer_list<absl::Flag<std::string>*> flags) {
  for (absl::Flag<std::string>* flag : flags) {
    absl::SetFlag(flag, ExpandHome(absl::GetFlag(*flag)));
  }
}

}  // namespace dictlog
