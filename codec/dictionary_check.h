// The content check of a dictionary: the CRC-32 (ISO-HDLC, as zlib's crc32 and Python's
// zlib.crc32) of its standard zstd bytes. Frames name their dictionary by id; the
// server sends this check beside the id (RecordFrame.dictionary_check,
// PackedSource.dictionary_check) so that a client caching dictionaries by id can tell
// a cached dictionary from a different one given the same id: a store restored from a
// backup gives again the ids the live store gave after it (docs/api.md).
//
// Pure function; thread-safe.
#ifndef DICTLOG_CODEC_DICTIONARY_CHECK_H_
#define DICTLOG_CODEC_DICTIONARY_CHECK_H_

#include <cstdint>

#include "absl/strings/string_view.h"

namespace dictlog::codec {

// The check of `content` (a dictionary's bytes). Never 0: a CRC of 0 is given as 1, so
// that 0 on the wire keeps meaning "no check" (a server from before checks).
uint32_t DictionaryCheck(absl::string_view content);

}  // namespace dictlog::codec

#endif  // DICTLOG_CODEC_DICTIONARY_CHECK_H_
