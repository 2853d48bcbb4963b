#include "common/command_line.h"

#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "gtest/gtest.h"

ABSL_FLAG(int, count, 1, "an int flag");
ABSL_FLAG(uint64_t, limit, 0, "an unsigned flag");
ABSL_FLAG(bool, fast, false, "a bool flag");
ABSL_FLAG(std::string, name, "", "a string flag");

namespace dictlog {
namespace {

std::string ErrorOf(std::vector<std::string> args) {
  args.insert(args.begin(), "prog");
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  return FirstFlagError(static_cast<int>(argv.size()), argv.data());
}

TEST(CommandLineTest, AcceptsWhatAbslAccepts) {
  EXPECT_EQ(ErrorOf({}), "");
  EXPECT_EQ(ErrorOf({"get", "--count=3", "-limit", "7", "--fast", "--nofast", "x", "-"}), "");
  EXPECT_EQ(ErrorOf({"--name", "--count=oops"}), "");  // --name's value.
  EXPECT_EQ(ErrorOf({"--fast=false", "--help", "--help=limit", "--version"}), "");
  EXPECT_EQ(ErrorOf({"--", "--unknown"}), "");  // Positional after "--".
  EXPECT_EQ(ErrorOf({"--undefok=unknown", "--unknown"}), "");  // Left to absl.
}

TEST(CommandLineTest, NamesTheFirstBadFlag) {
  EXPECT_EQ(ErrorOf({"--unknown=1"}), "unknown flag --unknown");
  EXPECT_EQ(ErrorOf({"x", "-nope"}), "unknown flag --nope");
  EXPECT_EQ(ErrorOf({"--nocount"}), "unknown flag --nocount");  // Not a bool.
  EXPECT_EQ(ErrorOf({"--nofast=1"}), "--nofast takes no value");
  EXPECT_EQ(ErrorOf({"--count"}), "--count needs a value");
  EXPECT_NE(ErrorOf({"--limit=-1"}).find("--limit=-1: "), std::string::npos)
      << ErrorOf({"--limit=-1"});
  EXPECT_NE(ErrorOf({"--count=two"}).find("--count=two: "), std::string::npos);
  EXPECT_NE(ErrorOf({"--fast=maybe"}).find("--fast=maybe: "), std::string::npos);
}

TEST(CommandLineTest, VersionLineNamesEveryLibrary) {
  EXPECT_EQ(VersionLine("dictlog", {{"zstd", "1.5.4"}, {"gRPC", "1.51.1"}}),
            std::string("dictlog (dictlog ") + kDictlogVersion + "): zstd 1.5.4, gRPC 1.51.1");
  EXPECT_EQ(VersionLine("x", {}), std::string("x (dictlog ") + kDictlogVersion + ")");
}

}  // namespace
}  // namespace dictlog
