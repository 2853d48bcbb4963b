#include "training/files.h"

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "common/test_dir.h"
#include "gtest/gtest.h"

namespace dictlog::trainer {
namespace {

void WriteText(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

TEST(AppendLinesTest, NewlineEndsARecordAndIsNotPartOfIt) {
  std::vector<std::string> records = {"earlier"};
  AppendLines("a\nbb\n\nc\r\nlast", &records);
  EXPECT_EQ(records, (std::vector<std::string>{"earlier", "a", "bb", "", "c\r", "last"}));
}

TEST(AppendLinesTest, FinalNewlineAddsNoEmptyRecord) {
  std::vector<std::string> records;
  AppendLines("a\nb\n", &records);
  EXPECT_EQ(records, (std::vector<std::string>{"a", "b"}));
  AppendLines("", &records);
  EXPECT_EQ(records.size(), 2u);
}

TEST(ExpandInputsTest, DirectoriesBecomeTheirRegularFilesSortedByName) {
  const std::string dir = FreshTestDir();
  std::filesystem::create_directories(dir + "/logs/sub");
  WriteText(dir + "/logs/b.log", "b");
  WriteText(dir + "/logs/a.log", "a");
  WriteText(dir + "/logs/sub/c.log", "c");  // Not recursive.
  WriteText(dir + "/single.log", "s");
  absl::StatusOr<std::vector<std::string>> files =
      ExpandInputs({dir + "/single.log", dir + "/logs"});
  ASSERT_TRUE(files.ok()) << files.status();
  EXPECT_EQ(*files, (std::vector<std::string>{dir + "/single.log", dir + "/logs/a.log",
                                              dir + "/logs/b.log"}));
}

TEST(ExpandInputsTest, MissingInputIsNotFound) {
  const std::string dir = FreshTestDir();
  absl::Status status = ExpandInputs({dir + "/absent.log"}).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_NE(status.message().find("absent.log"), std::string::npos) << status;
}

TEST(ReadFileTest, ReadsBytesAndNamesAMissingFile) {
  const std::string dir = FreshTestDir();
  std::filesystem::create_directories(dir);
  WriteText(dir + "/f", std::string("a\0b\n", 4));
  EXPECT_EQ(*ReadFile(dir + "/f"), std::string("a\0b\n", 4));
  absl::Status status = ReadFile(dir + "/absent").status();
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_NE(status.message().find("absent"), std::string::npos) << status;
}

}  // namespace
}  // namespace dictlog::trainer
