#include "common/home_path.h"

#include <cstdlib>

#include "gtest/gtest.h"

ABSL_FLAG(std::string, test_path, "", "a path flag");
ABSL_FLAG(std::string, other_path, "", "another");

namespace dictlog {
namespace {

TEST(HomePathTest, ExpandsALeadingTildeSlashOnly) {
  ASSERT_EQ(setenv("HOME", "/home/ann", 1), 0);
  EXPECT_EQ(ExpandHome("~/.dictlog-token"), "/home/ann/.dictlog-token");
  EXPECT_EQ(ExpandHome("~"), "/home/ann");
  EXPECT_EQ(ExpandHome("~bob/x"), "~bob/x");
  EXPECT_EQ(ExpandHome("a/~/b"), "a/~/b");
  EXPECT_EQ(ExpandHome("/abs"), "/abs");
  EXPECT_EQ(ExpandHome(""), "");
  ASSERT_EQ(setenv("HOME", "/", 1), 0);
  EXPECT_EQ(ExpandHome("~/x"), "/x");
  EXPECT_EQ(ExpandHome("~"), "/");
  ASSERT_EQ(setenv("HOME", "/home/ann/", 1), 0);
  EXPECT_EQ(ExpandHome("~/x"), "/home/ann/x");
}

TEST(HomePathTest, WithoutHomePathsStayAsTheyAre) {
  ASSERT_EQ(unsetenv("HOME"), 0);
  EXPECT_EQ(ExpandHome("~/x"), "~/x");
  ASSERT_EQ(setenv("HOME", "", 1), 0);
  EXPECT_EQ(ExpandHome("~/x"), "~/x");
}

TEST(HomePathTest, ExpandsTheGivenFlags) {
  ASSERT_EQ(setenv("HOME", "/h", 1), 0);
  absl::SetFlag(&FLAGS_test_path, "~/a");
  absl::SetFlag(&FLAGS_other_path, "~/b");
  ExpandHomeInFlags({&FLAGS_test_path});
  EXPECT_EQ(absl::GetFlag(FLAGS_test_path), "/h/a");
  EXPECT_EQ(absl::GetFlag(FLAGS_other_path), "~/b");
}

}  // namespace
}  // namespace dictlog
