// Unsigned LEB128 varints (7 bits a byte, low group first), as used in stored record
// headers. Header-only, stateless, thread-safe.
#ifndef DICTLOG_CODEC_VARINT_H_
#define DICTLOG_CODEC_VARINT_H_

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace dictlog::codec {

inline void PutVarint64(uint64_t value, std::string* out) {
  while (value >= 0x80) {
    out->push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out->push_back(static_cast<char>(value));
}

inline void PutVarint32(uint32_t value, std::string* out) { PutVarint64(value, out); }

// Reads a varint from the front of *in and advances it. False if *in ends early, the
// value does not fit 64 bits, or the encoding is not the shortest (a last byte of 0
// after a continuation byte: PutVarint64 never writes one, so it is corruption, and
// accepting it would let two byte strings parse to the same record or block).
inline bool GetVarint64(absl::string_view* in, uint64_t* value) {
  uint64_t result = 0;
  for (int shift = 0; shift <= 63 && !in->empty(); shift += 7) {
    const uint64_t byte = static_cast<unsigned char>(in->front());
    in->remove_prefix(1);
    if (shift == 63 && byte > 0x01) return false;
    result |= (byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) {
      if (byte == 0 && shift > 0) return false;  // Overlong.
      *value = result;
      return true;
    }
  }
  return false;
}

// As GetVarint64, and false if the value does not fit 32 bits.
inline bool GetVarint32(absl::string_view* in, uint32_t* value) {
  uint64_t wide = 0;
  if (!GetVarint64(in, &wide) || wide > UINT32_MAX) return false;
  *value = static_cast<uint32_t>(wide);
  return true;
}

}  // namespace dictlog::codec

#endif  // DICTLOG_CODEC_VARINT_H_
