#include "server/store/store_dir.h"

#include <rocksdb/status.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <system_error>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/strip.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/store/rocksdb_status.h"

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

// The log RocksDB's WAL check names ("Missing WAL with log number: 61.", "Size
// mismatch: WAL (log number: 61) in MANIFEST is ..."), as its file name 000061.log.
std::optional<std::string> CheckedWalName(absl::string_view message) {
  constexpr absl::string_view kNumber = "log number: ";
  const size_t at = message.find(kNumber);
  if (at == absl::string_view::npos) return std::nullopt;
  absl::string_view digits = message.substr(at + kNumber.size());
  digits = digits.substr(0, std::min(digits.find_first_not_of("0123456789"), digits.size()));
  uint64_t number = 0;
  if (!absl::SimpleAtoi(digits, &number)) return std::nullopt;
  char name[32];
  std::snprintf(name, sizeof(name), "%06" PRIu64 ".log", number);
  return std::string(name);
}

}  // namespace

absl::Status OpenRefusal(const std::string& path, const rocksdb::Status& opened) {
  const std::string what = absl::StrCat("opening database at ", path);
  if (opened.IsPathNotFound()) {
    // CURRENT is there (CheckStoreDir) and names a file that is not: the MANIFEST.
    return absl::DataLossError(
        absl::StrCat(what, ": a file the store names is missing: ", opened.ToString()));
  }
  const std::string message = opened.ToString();
  const bool missing = absl::StrContains(message, "Missing WAL with log number");
  const bool shorter = absl::StrContains(message, "Size mismatch: WAL");
  const std::optional<std::string> log = CheckedWalName(message);
  if (!opened.IsCorruption() || !(missing || shorter) || !log.has_value()) {
    return FromRocks(opened, what);
  }
  return absl::DataLossError(absl::StrCat(
      what, ": write-ahead log ", *log, ", which the MANIFEST lists as synced and still "
      "needed, is ", missing ? "missing" : "shorter than its synced size",
      ": writes acknowledged as synced are lost (the log was deleted or cut, or the "
      "MANIFEST lost its newest edit after the log was flushed and deleted). Opening "
      "without them would leave a hole in the store; restore a backup (RocksDB: ",
      message, ")"));
}

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
