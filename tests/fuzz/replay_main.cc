// The main of each fuzz target's regression test (`<target>_replay_test`, built with
// the normal gcc toolchain): feeds every file under the given directories, one input
// per file, to the target's LLVMFuzzerTestOneInput, as libFuzzer would. A violated
// property aborts (fails the test). Exits 1 if the first directory (the checked-in
// corpus) holds no input; later directories (crashes/) may be empty or absent.
//
// Usage: <target>_replay_test CORPUS_DIR [MORE_DIRS_OR_FILES...]
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
extern "C" __attribute__((weak)) int LLVMFuzzerInitialize(int* argc, char*** argv);

namespace {

std::vector<std::string> InputsUnder(const std::filesystem::path& path) {
  std::vector<std::string> files;
  if (std::filesystem::is_regular_file(path)) return {path.string()};
  if (!std::filesystem::is_directory(path)) return files;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(path)) {
    if (entry.is_regular_file()) files.push_back(entry.path().string());
  }
  return files;
}

void Replay(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)),
                                std::istreambuf_iterator<char>());
  // A copy of exactly the input's size, so reads past its end are caught by ASan.
  std::vector<uint8_t> input(bytes.begin(), bytes.end());
  LLVMFuzzerTestOneInput(input.empty() ? nullptr : input.data(), input.size());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR [DIR_OR_FILE...]\n", argv[0]);
    return 2;
  }
  if (LLVMFuzzerInitialize != nullptr) LLVMFuzzerInitialize(&argc, &argv);
  for (int i = 1; i < argc; ++i) {
    const std::vector<std::string> files = InputsUnder(argv[i]);
    std::printf("%s: %zu inputs\n", argv[i], files.size());
    if (i == 1 && files.empty()) {
      std::fprintf(stderr, "no corpus inputs in %s\n", argv[i]);
      return 1;
    }
    for (const std::string& file : files) Replay(file);
  }
  std::printf("all inputs replayed without a violation\n");
  return 0;
}
