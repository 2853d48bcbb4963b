#include "server/store/fault_injection_fs.h"

#include <algorithm>
#include <filesystem>
#include <system_error>
#include <utility>

namespace dictlog::store {
namespace {

using rocksdb::IODebugContext;
using rocksdb::IOOptions;
using rocksdb::IOStatus;

std::string Normal(const std::string& path) {
  std::string s = std::filesystem::path(path).lexically_normal().string();
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

std::string ParentOf(const std::string& fname) {
  return Normal(std::filesystem::path(Normal(fname)).parent_path().string());
}

// A file written through the FaultInjectionFs: appends and syncs are reported to it;
// syncs are not passed on (power loss is simulated, so a real fsync buys nothing).
class TrackedFile : public rocksdb::FSWritableFileOwnerWrapper {
 public:
  TrackedFile(FaultInjectionFs* fs, std::string fname,
              std::unique_ptr<rocksdb::FSWritableFile> target)
      : FSWritableFileOwnerWrapper(std::move(target)), fs_(fs), fname_(std::move(fname)) {}

  IOStatus Append(const rocksdb::Slice& data, const IOOptions& options,
                  IODebugContext* dbg) override {
    uint64_t allowed = 0;
    IOStatus s = fs_->OnAppend(fname_, data.size(), &allowed);
    if (allowed > 0) {
      IOStatus w = target()->Append(rocksdb::Slice(data.data(), allowed), options, dbg);
      if (!w.ok()) return w;
    }
    return s;
  }
  IOStatus Append(const rocksdb::Slice& data, const IOOptions& options,
                  const rocksdb::DataVerificationInfo& /*info*/,
                  IODebugContext* dbg) override {
    return Append(data, options, dbg);
  }
  IOStatus PositionedAppend(const rocksdb::Slice&, uint64_t, const IOOptions&,
                            IODebugContext*) override {
    return IOStatus::NotSupported("FaultInjectionFs: PositionedAppend");
  }
  IOStatus PositionedAppend(const rocksdb::Slice&, uint64_t, const IOOptions&,
                            const rocksdb::DataVerificationInfo&,
                            IODebugContext*) override {
    return IOStatus::NotSupported("FaultInjectionFs: PositionedAppend");
  }
  IOStatus Truncate(uint64_t size, const IOOptions& options,
                    IODebugContext* dbg) override {
    IOStatus s = fs_->OnTruncate(fname_, size);
    return s.ok() ? target()->Truncate(size, options, dbg) : s;
  }
  IOStatus Sync(const IOOptions&, IODebugContext*) override { return fs_->OnSync(fname_); }
  IOStatus Fsync(const IOOptions&, IODebugContext*) override { return fs_->OnSync(fname_); }
  IOStatus RangeSync(uint64_t, uint64_t, const IOOptions&, IODebugContext*) override {
    return IOStatus::OK();  // Not a durability point.
  }

 private:
  FaultInjectionFs* const fs_;
  const std::string fname_;
};

class TrackedDirectory : public rocksdb::FSDirectoryWrapper {
 public:
  TrackedDirectory(FaultInjectionFs* fs, std::string name,
                   std::unique_ptr<rocksdb::FSDirectory> target)
      : FSDirectoryWrapper(std::move(target)), fs_(fs), name_(Normal(name)) {}

  IOStatus Fsync(const IOOptions&, IODebugContext*) override {
    return fs_->OnDirectorySync(name_);
  }
  IOStatus FsyncWithDirOptions(const IOOptions&, IODebugContext*,
                               const rocksdb::DirFsyncOptions&) override {
    return fs_->OnDirectorySync(name_);
  }

 private:
  FaultInjectionFs* const fs_;
  const std::string name_;
};

}  // namespace

FaultInjectionFs::FaultInjectionFs(std::shared_ptr<rocksdb::FileSystem> target)
    : FileSystemWrapper(target) {}

void FaultInjectionFs::PowerOff() {
  absl::MutexLock lock(&mu_);
  powered_off_ = true;
}

FaultInjectionFs::DropStats FaultInjectionFs::RestorePower() {
  absl::MutexLock lock(&mu_);
  DropStats stats;
  for (auto it = files_.begin(); it != files_.end();) {
    std::error_code error;
    const uint64_t on_disk = std::filesystem::file_size(it->first, error);
    if (error) {  // Gone already.
      it = files_.erase(it);
      continue;
    }
    if (!it->second.dir_synced) {
      std::filesystem::remove(it->first, error);
      stats.bytes_dropped += on_disk;
      ++stats.files_deleted;
      it = files_.erase(it);
      continue;
    }
    if (on_disk > it->second.synced_size) {
      std::filesystem::resize_file(it->first, it->second.synced_size, error);
      stats.bytes_dropped += on_disk - it->second.synced_size;
    }
    it->second.size = it->second.synced_size;
    ++it;
  }
  powered_off_ = false;
  return stats;
}

void FaultInjectionFs::SetFreeBytes(uint64_t bytes) {
  absl::MutexLock lock(&mu_);
  free_bytes_ = bytes;
}

void FaultInjectionFs::ClearSpaceLimit() {
  absl::MutexLock lock(&mu_);
  free_bytes_.reset();
}

uint64_t FaultInjectionFs::no_space_errors() const {
  absl::MutexLock lock(&mu_);
  return no_space_errors_;
}

IOStatus FaultInjectionFs::CheckWritable() const {
  if (powered_off_) return IOStatus::IOError("FaultInjectionFs: power is off");
  return IOStatus::OK();
}

IOStatus FaultInjectionFs::Track(const std::string& fname, uint64_t existing_size,
                                 bool created,
                                 std::unique_ptr<rocksdb::FSWritableFile>* result) {
  *result = std::make_unique<TrackedFile>(this, Normal(fname), std::move(*result));
  absl::MutexLock lock(&mu_);
  FileState& state = files_[Normal(fname)];
  state.size = state.synced_size = existing_size;
  state.dir_synced = !created;
  return IOStatus::OK();
}

IOStatus FaultInjectionFs::NewWritableFile(const std::string& fname,
                                           const rocksdb::FileOptions& options,
                                           std::unique_ptr<rocksdb::FSWritableFile>* result,
                                           IODebugContext* dbg) {
  {
    absl::MutexLock lock(&mu_);
    IOStatus s = CheckWritable();
    if (!s.ok()) return s;
    if (free_bytes_.has_value() && *free_bytes_ == 0) {
      ++no_space_errors_;
      return IOStatus::NoSpace("FaultInjectionFs: disk full");
    }
  }
  IOStatus s = target()->NewWritableFile(fname, options, result, dbg);
  if (!s.ok()) return s;
  return Track(fname, 0, /*created=*/true, result);
}

IOStatus FaultInjectionFs::ReopenWritableFile(
    const std::string& fname, const rocksdb::FileOptions& options,
    std::unique_ptr<rocksdb::FSWritableFile>* result, IODebugContext* dbg) {
  {
    absl::MutexLock lock(&mu_);
    IOStatus s = CheckWritable();
    if (!s.ok()) return s;
  }
  std::error_code error;
  const uint64_t existing = std::filesystem::file_size(fname, error);
  IOStatus s = target()->ReopenWritableFile(fname, options, result, dbg);
  if (!s.ok()) return s;
  return Track(fname, error ? 0 : existing, /*created=*/bool(error), result);
}

IOStatus FaultInjectionFs::ReuseWritableFile(
    const std::string& fname, const std::string& old_fname,
    const rocksdb::FileOptions& options, std::unique_ptr<rocksdb::FSWritableFile>* result,
    IODebugContext* dbg) {
  {
    absl::MutexLock lock(&mu_);
    IOStatus s = CheckWritable();
    if (!s.ok()) return s;
    files_.erase(Normal(old_fname));
  }
  IOStatus s = target()->ReuseWritableFile(fname, old_fname, options, result, dbg);
  if (!s.ok()) return s;
  return Track(fname, 0, /*created=*/true, result);
}

IOStatus FaultInjectionFs::NewDirectory(const std::string& name, const IOOptions& options,
                                        std::unique_ptr<rocksdb::FSDirectory>* result,
                                        IODebugContext* dbg) {
  IOStatus s = target()->NewDirectory(name, options, result, dbg);
  if (!s.ok()) return s;
  *result = std::make_unique<TrackedDirectory>(this, name, std::move(*result));
  return IOStatus::OK();
}

IOStatus FaultInjectionFs::GetFreeSpace(const std::string& path, const IOOptions& options,
                                        uint64_t* free_bytes, IODebugContext* dbg) {
  {
    absl::MutexLock lock(&mu_);
    if (free_bytes_.has_value()) {
      *free_bytes = *free_bytes_;
      return IOStatus::OK();
    }
  }
  return target()->GetFreeSpace(path, options, free_bytes, dbg);
}

IOStatus FaultInjectionFs::DeleteFile(const std::string& fname, const IOOptions& options,
                                      IODebugContext* dbg) {
  absl::MutexLock lock(&mu_);
  IOStatus s = CheckWritable();
  if (!s.ok()) return s;
  s = target()->DeleteFile(fname, options, dbg);
  if (s.ok()) files_.erase(Normal(fname));
  return s;
}

IOStatus FaultInjectionFs::RenameFile(const std::string& src, const std::string& dst,
                                      const IOOptions& options, IODebugContext* dbg) {
  absl::MutexLock lock(&mu_);
  IOStatus s = CheckWritable();
  if (!s.ok()) return s;
  s = target()->RenameFile(src, dst, options, dbg);
  if (!s.ok()) return s;
  auto it = files_.find(Normal(src));
  if (it != files_.end()) {
    FileState state = it->second;
    state.dir_synced = true;  // Renames are kept (see the header).
    files_.erase(it);
    files_[Normal(dst)] = state;
  } else {
    files_.erase(Normal(dst));
  }
  return s;
}

IOStatus FaultInjectionFs::OnAppend(const std::string& fname, uint64_t size,
                                    uint64_t* allowed) {
  absl::MutexLock lock(&mu_);
  *allowed = 0;
  IOStatus s = CheckWritable();
  if (!s.ok()) return s;
  *allowed = size;
  if (free_bytes_.has_value()) {
    *allowed = std::min(size, *free_bytes_);
    *free_bytes_ -= *allowed;
  }
  files_[fname].size += *allowed;
  if (*allowed < size) {
    ++no_space_errors_;
    return IOStatus::NoSpace("FaultInjectionFs: disk full");
  }
  return IOStatus::OK();
}

IOStatus FaultInjectionFs::OnSync(const std::string& fname) {
  absl::MutexLock lock(&mu_);
  IOStatus s = CheckWritable();
  if (!s.ok()) return s;
  FileState& state = files_[fname];
  state.synced_size = state.size;
  return IOStatus::OK();
}

IOStatus FaultInjectionFs::OnTruncate(const std::string& fname, uint64_t size) {
  absl::MutexLock lock(&mu_);
  IOStatus s = CheckWritable();
  if (!s.ok()) return s;
  FileState& state = files_[fname];
  state.size = size;
  state.synced_size = std::min(state.synced_size, size);
  return IOStatus::OK();
}

IOStatus FaultInjectionFs::OnDirectorySync(const std::string& dir) {
  absl::MutexLock lock(&mu_);
  IOStatus s = CheckWritable();
  if (!s.ok()) return s;
  for (auto& [name, state] : files_) {
    if (ParentOf(name) == dir) state.dir_synced = true;
  }
  return IOStatus::OK();
}

}  // namespace dictlog::store
