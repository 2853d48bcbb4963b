#include "benchmarks/compare/record_id.h"

namespace dictlog::compare {

std::string RecordKey(absl::string_view category, uint64_t seq) {
  std::string key(category);
  key.push_back('\0');
  for (int shift = 56; shift >= 0; shift -= 8) {
    key.push_back(static_cast<char>((seq >> shift) & 0xff));
  }
  return key;
}

}  // namespace dictlog::compare
