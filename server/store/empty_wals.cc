#include "server/store/empty_wals.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "rocksdb/env.h"
#include "rocksdb/transaction_log.h"

namespace dictlog::store {
namespace {

// The number of a WAL file name ("000123.log"); nullopt for any other name.
std::optional<uint64_t> WalNumber(const std::string& name) {
  constexpr size_t kSuffix = 4;  // ".log"
  if (name.size() <= kSuffix || name.compare(name.size() - kSuffix, kSuffix, ".log") != 0 ||
      name.size() - kSuffix > 19) {
    return std::nullopt;
  }
  uint64_t number = 0;
  for (size_t i = 0; i + kSuffix < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') return std::nullopt;
    number = number * 10 + static_cast<uint64_t>(name[i] - '0');
  }
  return number;
}

}  // namespace

int DeleteStaleEmptyWals(rocksdb::DB* db) {
  // GetSortedWalFiles leaves empty WALs out: the directory is listed instead.
  if (!db->GetDBOptions().wal_dir.empty()) return 0;
  std::unique_ptr<rocksdb::LogFile> current;
  if (!db->GetCurrentWalFile(&current).ok() || current == nullptr) return 0;
  rocksdb::Env* env = db->GetEnv();
  std::vector<std::string> names;
  if (!env->GetChildren(db->GetName(), &names).ok()) return 0;
  int deleted = 0;
  for (const std::string& name : names) {
    const std::optional<uint64_t> number = WalNumber(name);
    if (!number.has_value() || *number >= current->LogNumber()) continue;
    const std::string path = db->GetName() + "/" + name;
    uint64_t bytes = 0;
    if (!env->GetFileSize(path, &bytes).ok() || bytes != 0) continue;
    if (env->DeleteFile(path).ok()) ++deleted;
  }
  return deleted;
}

}  // namespace dictlog::store
