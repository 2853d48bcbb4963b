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

}  // namespace dictlog

#endif  // DICTLOG_COMMON_TEST_DIR_H_
