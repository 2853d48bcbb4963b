#include "server/store/store_dir.h"

#include <algorithm>
#include <filesystem>
#include <system_error>
#include <vector>

#include "absl/strings/strip.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace dictlog::store {
namespace {

bool AllDigits(absl::string_view s) {
  return !s.empty() &&
         std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// A file RocksDB writes for a store's data or its list of files: NNNNNN.sst,
// NNNNNN.log, MANIFEST-NNNNNN (other files, e.g. a directory of other logs, are not).
bool IsStoreFile(absl::string_view name) {
  if (absl::ConsumePrefix(&name, "MANIFEST-")) return AllDigits(name);
  return (absl::ConsumeSuffix(&name, ".sst") || absl::ConsumeSuffix(&name, ".log")) &&
         AllDigits(name);
}

}  // namespace

absl::Status CheckStoreDir(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code error;
  if (!fs::exists(path, error)) return absl::OkStatus();  // A first start creates it.
  if (fs::exists(fs::path(path) / "CURRENT", error)) return absl::OkStatus();
  std::vector<std::string> found;
  size_t count = 0;
  for (fs::directory_iterator it(path, error), end; !error && it != end;
       it.increment(error)) {
    const std::string name = it->path().filename().string();
    if (!IsStoreFile(name)) continue;
    if (++count <= 3) found.push_back(name);
  }
  if (error) {
    return absl::UnavailableError(
        absl::StrCat("listing data directory ", path, ": ", error.message()));
  }
  if (count == 0) return absl::OkStatus();
  return absl::DataLossError(absl::StrCat(
      "data directory ", path, " holds a store's files (", absl::StrJoin(found, ", "),
      count > found.size() ? absl::StrCat(" and ", count - found.size(), " more") : "",
      ") but no CURRENT file, which names its MANIFEST; refusing to create a new store "
      "over them. Restore CURRENT (one line: the newest MANIFEST-NNNNNN's name and a "
      "newline) or restore a backup"));
}

}  // namespace dictlog::store
