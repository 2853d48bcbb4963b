#include "common/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "absl/strings/str_cat.h"

namespace dictlog {
namespace {

absl::Status WriteAll(int fd, absl::string_view contents, const std::string& path) {
  while (!contents.empty()) {
    const ssize_t n = ::write(fd, contents.data(), contents.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return absl::ErrnoToStatus(errno, absl::StrCat("cannot write ", path));
    contents.remove_prefix(static_cast<size_t>(n));
  }
  return absl::OkStatus();
}

// Opens `path` with `flags`, writes `contents`, optionally fsyncs, closes.
absl::Status WriteAndClose(const std::string& path, int flags, absl::string_view contents,
                           bool sync) {
  const int fd = ::open(path.c_str(), flags | O_WRONLY | O_CLOEXEC, 0644);
  if (fd < 0) return absl::ErrnoToStatus(errno, absl::StrCat("cannot open ", path));
  absl::Status status = WriteAll(fd, contents, path);
  if (status.ok() && sync && ::fsync(fd) != 0) {
    status = absl::ErrnoToStatus(errno, absl::StrCat("cannot sync ", path));
  }
  if (::close(fd) != 0 && status.ok()) {
    status = absl::ErrnoToStatus(errno, absl::StrCat("cannot close ", path));
  }
  return status;
}

// True when `path` exists and is not a regular file (lstat: a symlink counts).
bool IsSpecialFile(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) return false;
  return !S_ISREG(st.st_mode);
}

// Makes the rename durable. Some file systems refuse fsync on a directory (EINVAL):
// nothing more can be done there, so that is not an error.
absl::Status SyncParentDirectory(const std::string& path) {
  const size_t slash = path.rfind('/');
  const std::string dir =
      slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return absl::ErrnoToStatus(errno, absl::StrCat("cannot open ", dir));
  absl::Status status;
  if (::fsync(fd) != 0 && errno != EINVAL) {
    status = absl::ErrnoToStatus(errno, absl::StrCat("cannot sync ", dir));
  }
  ::close(fd);
  return status;
}

}  // namespace

absl::Status WriteFileAtomically(const std::string& path, absl::string_view contents) {
  // O_CREAT: a dangling symlink's target is created, as the shell's `>` would.
  if (IsSpecialFile(path)) return WriteAndClose(path, O_CREAT | O_TRUNC, contents, false);
  const std::string tmp = path + ".tmp";
  absl::Status status = WriteAndClose(tmp, O_CREAT | O_TRUNC, contents, true);
  if (status.ok() && ::rename(tmp.c_str(), path.c_str()) != 0) {
    status = absl::ErrnoToStatus(errno, absl::StrCat("cannot rename ", tmp, " to ", path));
  }
  if (!status.ok()) {
    ::unlink(tmp.c_str());
    return status;
  }
  return SyncParentDirectory(path);
}

}  // namespace dictlog
