#include "server/store/background_errors.h"

#include <cstdio>
#include <string>

#include "absl/strings/str_cat.h"
#include "server/store/rocksdb_status.h"

namespace dictlog::store {

absl::string_view BackgroundErrors::ReasonName(rocksdb::BackgroundErrorReason reason) {
  switch (reason) {
    case rocksdb::BackgroundErrorReason::kFlush:
    case rocksdb::BackgroundErrorReason::kFlushNoWAL:
      return "flush";
    case rocksdb::BackgroundErrorReason::kCompaction:
      return "compaction";
    case rocksdb::BackgroundErrorReason::kWriteCallback:
      return "write-ahead log write";
    case rocksdb::BackgroundErrorReason::kMemTable:
      return "memtable insert";
    case rocksdb::BackgroundErrorReason::kManifestWrite:
    case rocksdb::BackgroundErrorReason::kManifestWriteNoWAL:
      return "MANIFEST write";
  }
  return "background operation";
}

void BackgroundErrors::OnBackgroundError(rocksdb::BackgroundErrorReason reason,
                                         rocksdb::Status* error) {
  if (error == nullptr || error->ok() || error->severity() < rocksdb::Status::kHardError) {
    return;  // A soft error (or none) leaves writes going.
  }
  const absl::Status stopped =
      FromRocks(*error, absl::StrCat("writes stopped after a failed ", ReasonName(reason)));
  {
    absl::MutexLock lock(&mu_);
    if (!stopped_.ok()) return;  // The first one says why.
    stopped_ = stopped;
  }
  std::fprintf(stderr, "dictlogd: WARNING: %s; reads go on (docs/operations.md, \"Writes "
               "stopped\")\n", stopped.ToString().c_str());
}

absl::Status BackgroundErrors::Stopped() const {
  absl::MutexLock lock(&mu_);
  return stopped_;
}

void BackgroundErrors::Clear() {
  absl::MutexLock lock(&mu_);
  stopped_ = absl::OkStatus();
}

}  // namespace dictlog::store
