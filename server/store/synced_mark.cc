#include "server/store/synced_mark.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "server/store/keys.h"

namespace dictlog::store {
namespace {

constexpr uint64_t kCheck = 0x6469'6374'6c6f'6721;  // "dictlog!"
constexpr size_t kBytes = 16;

std::string PathIn(const std::string& dir) {
  return absl::StrCat(dir, "/", SyncedMark::kFileName);
}

absl::Status SyncDir(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return absl::UnavailableError(absl::StrCat("cannot open ", dir, ": ", std::strerror(errno)));
  const bool synced = ::fsync(fd) == 0 || errno == EINVAL;  // Some file systems refuse.
  const int error = errno;
  ::close(fd);
  if (!synced) return absl::UnavailableError(absl::StrCat("cannot sync ", dir, ": ", std::strerror(error)));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::optional<uint64_t>> SyncedMark::Read(const std::string& dir) {
  const std::string path = PathIn(dir);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT) return std::nullopt;
  if (fd < 0) return absl::UnavailableError(absl::StrCat("cannot open ", path, ": ", std::strerror(errno)));
  char bytes[kBytes + 1];
  ssize_t n;
  do {
    n = ::pread(fd, bytes, sizeof(bytes), 0);
  } while (n < 0 && errno == EINTR);
  const int error = errno;
  ::close(fd);
  if (n < 0) return absl::UnavailableError(absl::StrCat("cannot read ", path, ": ", std::strerror(error)));
  const uint64_t sequence = GetFixed64BE(bytes);
  if (n != static_cast<ssize_t>(kBytes) || (sequence ^ kCheck) != GetFixed64BE(bytes + 8)) {
    return absl::DataLossError(absl::StrCat(path, " does not check (", n, " bytes)"));
  }
  return sequence;
}

SyncedMark::SyncedMark(std::string dir) : dir_(std::move(dir)) {}

SyncedMark::~SyncedMark() {
  absl::MutexLock lock(&mu_);
  if (fd_ >= 0) ::close(fd_);
}

absl::Status SyncedMark::OpenLocked() {
  if (fd_ >= 0) return absl::OkStatus();
  const std::string path = PathIn(dir_);
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) return absl::UnavailableError(absl::StrCat("cannot open ", path, ": ", std::strerror(errno)));
  return SyncDir(dir_);  // The file's name must outlive a power loss too.
}

absl::Status SyncedMark::Raise(uint64_t sequence) {
  absl::MutexLock lock(&mu_);
  if (raised_ != 0 && sequence <= raised_) return absl::OkStatus();
  if (absl::Status opened = OpenLocked(); !opened.ok()) return opened;
  std::string bytes;
  PutFixed64BE(sequence, &bytes);
  PutFixed64BE(sequence ^ kCheck, &bytes);
  ssize_t n;
  do {
    n = ::pwrite(fd_, bytes.data(), kBytes, 0);
  } while (n < 0 && errno == EINTR);
  if (n != static_cast<ssize_t>(kBytes)) {  // Not synced: see the header.
    return absl::UnavailableError(absl::StrCat("cannot write ", PathIn(dir_), ": ",
                                               n < 0 ? std::strerror(errno) : "short write"));
  }
  raised_ = sequence;
  return absl::OkStatus();
}

}  // namespace dictlog::store
