#include "training/files.h"

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace dictlog::trainer {
namespace {

namespace fs = std::filesystem;

absl::Status ErrorFor(const std::error_code& error, absl::string_view what) {
  return absl::ErrnoToStatus(error.value(), what);
}

// The regular files directly in `dir`, sorted by name.
absl::StatusOr<std::vector<std::string>> ListDirectory(const std::string& dir) {
  std::error_code error;
  std::vector<std::string> files;
  for (fs::directory_iterator it(dir, error), end; !error && it != end;
       it.increment(error)) {
    std::error_code type_error;
    if (it->is_regular_file(type_error)) files.push_back(it->path().string());
  }
  if (error) return ErrorFor(error, absl::StrCat("cannot list ", dir));
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

absl::StatusOr<std::vector<std::string>> ExpandInputs(
    const std::vector<std::string>& inputs) {
  std::vector<std::string> files;
  for (const std::string& input : inputs) {
    std::error_code error;
    const fs::file_status status = fs::status(input, error);
    if (status.type() == fs::file_type::not_found) {
      return absl::NotFoundError(absl::StrCat(input, ": no such file or directory"));
    }
    if (error) return ErrorFor(error, absl::StrCat("cannot stat ", input));
    if (fs::is_regular_file(status)) {
      files.push_back(input);
    } else if (fs::is_directory(status)) {
      ASSIGN_OR_RETURN(std::vector<std::string> listed, ListDirectory(input));
      files.insert(files.end(), listed.begin(), listed.end());
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat(input, ": neither a regular file nor a directory"));
    }
  }
  return files;
}

void AppendLines(absl::string_view text, std::vector<std::string>* records) {
  while (!text.empty()) {
    const size_t end = text.find('\n');
    if (end == absl::string_view::npos) {
      records->emplace_back(text);
      return;
    }
    records->emplace_back(text.substr(0, end));
    text.remove_prefix(end + 1);
  }
}

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::ErrnoToStatus(errno, absl::StrCat("cannot open ", path));
  std::ostringstream content;
  content << in.rdbuf();
  if (in.bad()) return absl::ErrnoToStatus(errno, absl::StrCat("cannot read ", path));
  return content.str();
}

absl::StatusOr<std::vector<std::string>> ReadLines(const std::string& path,
                                                   const LineOptions& options) {
  ASSIGN_OR_RETURN(const std::string text, ReadFile(path));
  std::vector<std::string> lines;
  AppendLines(text, &lines);
  if (options.skip_empty) {
    lines.erase(std::remove(lines.begin(), lines.end(), std::string()), lines.end());
  }
  return lines;
}

absl::StatusOr<std::vector<std::string>> ListLogFiles(const std::string& dir) {
  ASSIGN_OR_RETURN(std::vector<std::string> files, ListDirectory(dir));
  files.erase(std::remove_if(files.begin(), files.end(),
                             [](const std::string& file) {
                               return fs::path(file).extension() != ".log";
                             }),
              files.end());
  return files;
}

absl::StatusOr<std::vector<LogFile>> ReadLogFiles(const std::string& dir,
                                                  const LineOptions& options) {
  ASSIGN_OR_RETURN(const std::vector<std::string> paths, ListLogFiles(dir));
  std::vector<LogFile> files;
  for (const std::string& path : paths) {
    ASSIGN_OR_RETURN(std::vector<std::string> lines, ReadLines(path, options));
    files.push_back({path, fs::path(path).stem().string(), std::move(lines)});
  }
  return files;
}

}  // namespace dictlog::trainer
