#include "server/engine/backup_root.h"

#include <filesystem>
#include <system_error>

#include "absl/strings/str_cat.h"

namespace dictlog::engine {
namespace {

namespace fs = std::filesystem;

// Whether `path` is strictly below `root` (both absolute and resolved).
bool StrictlyInside(const fs::path& root, const fs::path& path) {
  auto r = root.begin(), p = path.begin();
  for (; r != root.end(); ++r, ++p) {
    if (r->empty()) continue;  // The empty last element of a root ending in '/'.
    if (p == path.end() || *p != *r) return false;
  }
  for (; p != path.end(); ++p) {
    if (!p->empty()) return true;
  }
  return false;
}

bool IsSymlink(const fs::path& path) {
  std::error_code error;
  return fs::is_symlink(fs::symlink_status(path, error));
}

absl::Status Outside(const std::string& dir, const std::string& root) {
  return absl::PermissionDeniedError(absl::StrCat(
      "backup directory ", dir, " is not inside the server's --backup_root ", root));
}

}  // namespace

absl::StatusOr<std::string> ConfineBackupDir(const std::string& root,
                                             const std::string& dir) {
  if (root.empty()) {
    return absl::FailedPreconditionError(
        "backups are off on this server: start dictlogd with --backup_root=DIR");
  }
  const fs::path requested = fs::path(dir).lexically_normal();
  if (dir.empty() || !requested.is_absolute()) {
    return absl::InvalidArgumentError(
        absl::StrCat("backup directory must be an absolute path, got \"", dir, "\""));
  }
  std::error_code error;
  const fs::path resolved_root = fs::canonical(root, error);
  if (error) {
    return absl::FailedPreconditionError(
        absl::StrCat("--backup_root ", root, " is not usable: ", error.message()));
  }
  // "/a/b/" names b: drop the empty last element before taking the parent.
  const fs::path target =
      requested.has_filename() ? requested : requested.parent_path();
  const fs::path parent = fs::weakly_canonical(target.parent_path(), error);
  if (error || !target.has_filename()) return Outside(dir, root);
  const fs::path resolved = parent / target.filename();
  if (!StrictlyInside(resolved_root, resolved)) return Outside(dir, root);
  if (!fs::is_directory(parent, error)) {
    return absl::FailedPreconditionError(
        absl::StrCat("parent directory ", parent.string(), " does not exist"));
  }
  if (IsSymlink(resolved) || IsSymlink(resolved.string() + ".tmp")) {
    return absl::PermissionDeniedError(absl::StrCat(
        "backup directory ", dir, " or its .tmp is a symbolic link"));
  }
  return resolved.string();
}

}  // namespace dictlog::engine
