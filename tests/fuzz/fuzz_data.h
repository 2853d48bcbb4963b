// Test-only fixtures of the fuzz targets, read from tests/fuzz/data (written by
// make_seeds from the loghub samples): real log lines per category and real
// dictionaries, full and compact, with fixed ids. The directory is $DICTLOG_FUZZ_DATA
// if set, else tests/fuzz/data relative to the working directory (the repository root
// for run_fuzzers.sh, the runfiles root under `bazel test`).
//
// Loaded once per process and immutable afterwards: safe to read from any thread.
#ifndef DICTLOG_TESTS_FUZZ_FUZZ_DATA_H_
#define DICTLOG_TESTS_FUZZ_FUZZ_DATA_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "codec/dictionary.h"
#include "codec/test_dictionary.h"

namespace dictlog::fuzz {

// The fixture dictionaries: file name under the data directory, its category (whose
// lines it was trained on) and whether it is compact.
struct FixtureDictionary {
  const char* file;
  const char* category;
  uint32_t id;
  bool compact;
};
inline constexpr FixtureDictionary kFixtureDictionaries[] = {
    {"HDFS.full.dict", "HDFS", 40001, false},
    {"Apache.compact.dict", "Apache", 40002, true},
    {"OpenSSH.full.dict", "OpenSSH", 40003, false},
};

std::string DataDir();
// The bytes of a file in the data directory; aborts if it cannot be read (a broken
// fixture, not a finding).
std::string ReadDataFile(absl::string_view name);
// The lines of `<category>.lines`.
std::vector<std::string> DataLines(absl::string_view category);

// A lookup holding every fixture dictionary.
const codec::MapDictionaryLookup& FixtureDictionaries();

}  // namespace dictlog::fuzz

#endif  // DICTLOG_TESTS_FUZZ_FUZZ_DATA_H_
