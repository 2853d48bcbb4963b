// The layout of a formatted zstd dictionary (RFC 8878, section 5), read and written by
// our own code so that dictlog can rewrite a dictionary's entropy tables (compact
// dictionaries, issue 8) while keeping a standard dictionary that stock zstd loads:
//
//   dictionary   := magic:u32le(0xEC30A437) id:u32le entropy content
//   entropy      := huffman_tree fse(offsets) fse(match_lengths) fse(literal_lengths)
//                   repeat_offsets:3 x u32le
//   huffman_tree := Huffman tree description (RFC 8878 4.2.1), kept as bytes
//   fse(...)     := FSE table description (RFC 8878 4.1.1): accuracy log and
//                   normalized counts
//
// Pure functions over bytes; thread-safe.
#ifndef DICTLOG_CODEC_DICTIONARY_FORMAT_H_
#define DICTLOG_CODEC_DICTIONARY_FORMAT_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace dictlog::codec {

// An FSE table description: probabilities of symbols 0..counts.size()-1 in a table of
// 2^accuracy_log cells. A count of -1 means "less than one cell" (it takes one cell).
struct FseTable {
  int accuracy_log = 0;
  std::vector<int16_t> counts;
};

// Largest accuracy log the format allows per table, and the largest symbol.
inline constexpr int kMaxOffsetLog = 8;
inline constexpr int kMaxMatchLengthLog = 9;
inline constexpr int kMaxLiteralLengthLog = 9;
inline constexpr int kMinAccuracyLog = 5;
inline constexpr int kMaxOffsetSymbol = 31;
inline constexpr int kMaxMatchLengthSymbol = 52;
inline constexpr int kMaxLiteralLengthSymbol = 35;

// Reads one FSE table description from the front of `in` whose symbols lie in
// 0..max_symbol and accuracy log in 5..max_log; sets *consumed to its size in bytes.
// DATA_LOSS if it is malformed (counts that do not sum to the table size, a symbol or
// log out of range, truncated input).
absl::StatusOr<FseTable> ReadFseTable(absl::string_view in, int max_symbol, int max_log,
                                      size_t* consumed);

// Appends the description of `table` to *out. INVALID_ARGUMENT if its counts do not
// fill exactly 2^accuracy_log cells or the log is outside 5..15.
absl::Status WriteFseTable(const FseTable& table, std::string* out);

// The views point into the parsed bytes, which must outlive the parts.
struct DictionaryParts {
  uint32_t id = 0;
  absl::string_view huffman_tree;  // The description's bytes, as found.
  FseTable offsets;
  FseTable match_lengths;
  FseTable literal_lengths;
  std::array<uint32_t, 3> repeat_offsets = {1, 4, 8};
  absl::string_view content;
};

// Splits a formatted dictionary into its parts. DATA_LOSS if it is not one (wrong
// magic, truncated or malformed tables, a repeat offset of 0 or beyond the content).
absl::StatusOr<DictionaryParts> ParseDictionary(absl::string_view dictionary);

// The dictionary bytes of `parts` (the inverse of ParseDictionary).
absl::StatusOr<std::string> SerializeDictionary(const DictionaryParts& parts);

}  // namespace dictlog::codec

#endif  // DICTLOG_CODEC_DICTIONARY_FORMAT_H_
