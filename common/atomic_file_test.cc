#include "common/atomic_file.h"

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "common/test_dir.h"
#include "gtest/gtest.h"

namespace dictlog {
namespace {

std::string ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string NewDir() {
  const std::string dir = FreshTestDir();
  std::filesystem::create_directories(dir);
  return dir;
}

TEST(WriteFileAtomicallyTest, CreatesAFile) {
  const std::string path = NewDir() + "/new.dict";
  ASSERT_TRUE(WriteFileAtomically(path, std::string("a\0b", 3)).ok());
  EXPECT_EQ(ReadText(path), std::string("a\0b", 3));
}

TEST(WriteFileAtomicallyTest, ReplacesTheFileAndLeavesNoTemporary) {
  const std::string path = NewDir() + "/out.dict";
  std::ofstream(path) << "old content";
  ASSERT_TRUE(WriteFileAtomically(path, "new").ok());
  EXPECT_EQ(ReadText(path), "new");
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
}

TEST(WriteFileAtomicallyTest, MissingDirectoryIsNotFoundNamingThePath) {
  const absl::Status status = WriteFileAtomically(NewDir() + "/no/such/out.dict", "x");
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_NE(status.message().find("out.dict.tmp"), std::string::npos) << status;
}

TEST(WriteFileAtomicallyTest, ADirectoryIsRefusedAndKept) {
  const std::string dir = NewDir();
  const std::string path = dir + "/taken";
  std::filesystem::create_directories(path + "/inside");
  // lstat says "directory", so this is the in-place path: opening a directory for
  // writing fails (EISDIR) and the directory stays.
  EXPECT_FALSE(WriteFileAtomically(path, "x").ok());
  EXPECT_TRUE(std::filesystem::is_directory(path + "/inside"));
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
}

TEST(WriteFileAtomicallyTest, SymlinkIsKeptAndItsTargetWritten) {
  const std::string dir = NewDir();
  std::ofstream(dir + "/target") << "old";
  std::filesystem::create_symlink(dir + "/target", dir + "/link");
  ASSERT_TRUE(WriteFileAtomically(dir + "/link", "new").ok());
  EXPECT_TRUE(std::filesystem::is_symlink(dir + "/link"));
  EXPECT_EQ(ReadText(dir + "/target"), "new");
}

TEST(WriteFileAtomicallyTest, DanglingSymlinkGetsItsTargetCreated) {
  const std::string dir = NewDir();
  std::filesystem::create_symlink(dir + "/later", dir + "/link");
  ASSERT_TRUE(WriteFileAtomically(dir + "/link", "made").ok());
  EXPECT_TRUE(std::filesystem::is_symlink(dir + "/link"));
  EXPECT_EQ(ReadText(dir + "/later"), "made");
}

TEST(WriteFileAtomicallyTest, FifoIsWrittenIntoNotReplaced) {
  // As root, a rename onto /dev/null once replaced the device with a regular file; a
  // FIFO stands for every such path here.
  const std::string fifo = NewDir() + "/out.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string received;
  std::thread reader([&] { received = ReadText(fifo); });
  const absl::Status status = WriteFileAtomically(fifo, "through the pipe");
  reader.join();
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(received, "through the pipe");
  struct stat st;
  ASSERT_EQ(::lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
}

}  // namespace
}  // namespace dictlog
