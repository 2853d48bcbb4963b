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

TEST(ReadLinesTest, KeepsCarriageReturnsAndEmptyLinesUnlessAskedToSkipThem) {
  const std::string dir = FreshTestDir();
  std::filesystem::create_directories(dir);
  WriteText(dir + "/f.log", "a\r\n\nb\n\r\nlast");
  EXPECT_EQ(*ReadLines(dir + "/f.log"),
            (std::vector<std::string>{"a\r", "", "b", "\r", "last"}));
  LineOptions skip_empty;
  skip_empty.skip_empty = true;
  EXPECT_EQ(*ReadLines(dir + "/f.log", skip_empty),
            (std::vector<std::string>{"a\r", "b", "\r", "last"}));
  EXPECT_EQ(ReadLines(dir + "/absent.log").status().code(), absl::StatusCode::kNotFound);
}

TEST(ReadLogFilesTest, OnlyLogFilesDirectlyInTheDirectorySortedByName) {
  const std::string dir = FreshTestDir();
  std::filesystem::create_directories(dir + "/sub");
  WriteText(dir + "/b.log", "b1\nb2\n");
  WriteText(dir + "/a.log", "a1");
  WriteText(dir + "/notes.txt", "not a log");
  WriteText(dir + "/a.log.gz", "not a log");
  WriteText(dir + "/sub/c.log", "c");  // Not recursive.
  std::filesystem::create_directories(dir + "/d.log");  // Not a regular file.
  absl::StatusOr<std::vector<std::string>> paths = ListLogFiles(dir);
  ASSERT_TRUE(paths.ok()) << paths.status();
  EXPECT_EQ(*paths, (std::vector<std::string>{dir + "/a.log", dir + "/b.log"}));

  absl::StatusOr<std::vector<LogFile>> files = ReadLogFiles(dir);
  ASSERT_TRUE(files.ok()) << files.status();
  ASSERT_EQ(files->size(), 2u);
  EXPECT_EQ((*files)[0].path, dir + "/a.log");
  EXPECT_EQ((*files)[0].name, "a");
  EXPECT_EQ((*files)[0].lines, (std::vector<std::string>{"a1"}));
  EXPECT_EQ((*files)[1].name, "b");
  EXPECT_EQ((*files)[1].lines, (std::vector<std::string>{"b1", "b2"}));
}

TEST(ReadLogFilesTest, MissingDirectoryIsNotFoundAndAnEmptyOneHasNoFiles) {
  const std::string dir = FreshTestDir();
  EXPECT_EQ(ReadLogFiles(dir + "/absent").status().code(), absl::StatusCode::kNotFound);
  std::filesystem::create_directories(dir + "/empty");
  absl::StatusOr<std::vector<LogFile>> files = ReadLogFiles(dir + "/empty");
  ASSERT_TRUE(files.ok()) << files.status();
  EXPECT_TRUE(files->empty());
}

}  // namespace
}  // namespace dictlog::trainer
