// Test-only: a fresh, empty directory under $TEST_TMPDIR named after the running
// gtest test, so tests of one binary never share state. Call from the test thread.
#ifndef DICTLOG_COMMON_TEST_DIR_H_
#define DICTLOG_COMMON_TEST_DIR_H_

#include <cstdlib>
#include <filesystem>
#include <string>

#include "gtest/gtest.h"

namespace dictlog {

inline std::string FreshTestDir(const std::string& suffix = "") {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const ::testing::TestInfo* test = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string path = std::string(tmp == nullptr ? "/tmp" : tmp) + "/" +
                     test->test_suite_name() + "." + test->name() + suffix;
  std::filesystem::remove_all(path);
  return path;
}

// Test-only: the runfiles path of `path`, a file or directory of the workspace named
// in the test's `data` (e.g. "server/engine/testdata/sst_v1_store").
inline std::string RunfilePath(const std::string& path) {
  return std::string(std::getenv("TEST_SRCDIR")) + "/" + std::getenv("TEST_WORKSPACE") + "/" +
         path;
}

// Test-only: a FreshTestDir() holding a copy of the files of the runfiles directory
// `path` (a fixture store: tests open the copy, never the checked-in files).
inline std::string FixtureCopy(const std::string& path) {
  const std::string to = FreshTestDir();
  std::filesystem::create_directories(to);
  for (const auto& file : std::filesystem::directory_iterator(RunfilePath(path))) {
    std::filesystem::copy_file(file.path(), to + "/" + file.path().filename().string());
  }
  return to;
}

}  // namespace dictlog

#endif  // DICTLOG_COMMON_TEST_DIR_H_
