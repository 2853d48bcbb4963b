#include "server/store/wal_drop_log.h"

#include <cstdio>
#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"

namespace dictlog::store {

WalDropLog::WalDropLog(std::shared_ptr<rocksdb::Logger> target)
    : rocksdb::LoggerWrapper(target.get()), target_(std::move(target)) {}

void WalDropLog::Logv(const rocksdb::InfoLogLevel level, const char* format, va_list ap) {
  va_list copy;
  va_copy(copy, ap);
  Tap(format, copy);
  va_end(copy);
  rocksdb::LoggerWrapper::Logv(level, format, ap);
}

void WalDropLog::Logv(const char* format, va_list ap) {
  va_list copy;
  va_copy(copy, ap);
  Tap(format, copy);
  va_end(copy);
  rocksdb::LoggerWrapper::Logv(format, ap);
}

void WalDropLog::Tap(const char* format, va_list ap) {
  if (std::strstr(format, "dropping") == nullptr) return;  // Cheap: most lines are not.
  char line[1024];
  const int n = std::vsnprintf(line, sizeof(line), format, ap);
  if (n < 0) return;
  absl::string_view text(line, std::min<size_t>(n, sizeof(line) - 1));
  const int64_t bytes = DroppedBytes(text);
  // RocksDB's macros put "[file.cc:line] " before the text: not the operator's business.
  if (absl::StartsWith(text, "[")) {
    const size_t end = text.find("] ");
    if (end != absl::string_view::npos) text.remove_prefix(end + 2);
  }
  if (bytes < 0) return;
  absl::MutexLock lock(&mu_);
  drops_.bytes += static_cast<uint64_t>(bytes);
  ++drops_.reports;
  if (drops_.first.empty()) drops_.first = std::string(text);
}

WalDrops WalDropLog::drops() const {
  absl::MutexLock lock(&mu_);
  return drops_;
}

int64_t WalDropLog::DroppedBytes(absl::string_view line) {
  constexpr absl::string_view kDropping = ": dropping ";
  const size_t at = line.find(kDropping);
  if (at == absl::string_view::npos) return -1;
  absl::string_view rest = line.substr(at + kDropping.size());
  const size_t space = rest.find(" bytes; ");
  int64_t bytes = 0;
  if (space == absl::string_view::npos || !absl::SimpleAtoi(rest.substr(0, space), &bytes) ||
      bytes < 0) {
    return -1;
  }
  return bytes;
}

}  // namespace dictlog::store
