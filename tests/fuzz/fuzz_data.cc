#include "tests/fuzz/fuzz_data.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace dictlog::fuzz {

std::string DataDir() {
  const char* dir = std::getenv("DICTLOG_FUZZ_DATA");
  return dir != nullptr ? dir : "tests/fuzz/data";
}

std::string ReadDataFile(absl::string_view name) {
  const std::string path = absl::StrCat(DataDir(), "/", name);
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "fuzz fixture missing: %s (set DICTLOG_FUZZ_DATA)\n", path.c_str());
    std::abort();
  }
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

std::vector<std::string> DataLines(absl::string_view category) {
  return absl::StrSplit(ReadDataFile(absl::StrCat(category, ".lines")), '\n',
                        absl::SkipEmpty());
}

const codec::MapDictionaryLookup& FixtureDictionaries() {
  static const codec::MapDictionaryLookup* lookup = [] {
    auto* dicts = new codec::MapDictionaryLookup;
    for (const FixtureDictionary& fixture : kFixtureDictionaries) {
      auto dict = codec::DecoderDictionary::Create(ReadDataFile(fixture.file));
      if (!dict.ok() || (*dict)->id() != fixture.id || (*dict)->compact() != fixture.compact) {
        std::fprintf(stderr, "bad fuzz fixture dictionary %s\n", fixture.file);
        std::abort();
      }
      dicts->Add(*std::move(dict));
    }
    return dicts;
  }();
  return *lookup;
}

}  // namespace dictlog::fuzz
