#include "codec/dictionary_check.h"

#include <zlib.h>

#include <algorithm>

namespace dictlog::codec {

uint32_t DictionaryCheck(absl::string_view content) {
  uLong crc = crc32(0L, Z_NULL, 0);
  const auto* bytes = reinterpret_cast<const Bytef*>(content.data());
  size_t left = content.size();
  while (left > 0) {  // crc32 takes a uInt length.
    const uInt n = static_cast<uInt>(std::min<size_t>(left, 1u << 30));
    crc = crc32(crc, bytes, n);
    bytes += n;
    left -= n;
  }
  const uint32_t check = static_cast<uint32_t>(crc);
  return check == 0 ? 1 : check;
}

}  // namespace dictlog::codec
