#include "server/engine/v1_block_fixture.h"

#include <cstdlib>
#include <filesystem>

#include "codec/test_dictionary.h"
#include "common/test_dir.h"

namespace dictlog::engine {

std::string V1BlockFixtureCopy() {
  const std::string from = std::string(std::getenv("TEST_SRCDIR")) + "/" +
                           std::getenv("TEST_WORKSPACE") +
                           "/server/engine/testdata/v1_block_store";
  const std::string to = FreshTestDir();
  std::filesystem::create_directories(to);
  for (const auto& file : std::filesystem::directory_iterator(from)) {
    std::filesystem::copy_file(file.path(), to + "/" + file.path().filename().string());
  }
  return to;
}

std::vector<std::string> V1BlockFixtureLines() {
  std::vector<std::string> lines = codec::SyntheticLogLines(600, 7);
  for (std::string& line : codec::SyntheticLogLines(150, 8)) lines.push_back(std::move(line));
  return lines;
}

const char* V1BlockFixtureCategory(size_t index) {
  return index % 2 == 0 ? "app-a" : "app-b";
}

}  // namespace dictlog::engine
