#include "codec/dictionary_format.h"

#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace dictlog::codec {
namespace {

constexpr uint32_t kDictionaryMagic = 0xEC30A437;

// Reads bits least significant first, as the FSE table description stores them.
class BitReader {
 public:
  explicit BitReader(absl::string_view in) : in_(in) {}
  // The next `n` (<= 16) bits without consuming them; bits past the end read as 0.
  uint32_t Peek(int n) const {
    uint32_t v = 0;
    for (int i = 0; i < n; ++i) {
      const size_t bit = pos_ + i;
      const size_t byte = bit / 8;
      if (byte < in_.size() && ((static_cast<uint8_t>(in_[byte]) >> (bit % 8)) & 1)) {
        v |= 1u << i;
      }
    }
    return v;
  }
  void Skip(int n) { pos_ += n; }
  bool Overrun() const { return pos_ > in_.size() * 8; }
  size_t BytesUsed() const { return (pos_ + 7) / 8; }

 private:
  absl::string_view in_;
  size_t pos_ = 0;
};

class BitWriter {
 public:
  void Put(uint32_t value, int n) {
    for (int i = 0; i < n; ++i) {
      if (pos_ % 8 == 0) bytes_.push_back('\0');
      if ((value >> i) & 1) bytes_.back() = static_cast<char>(bytes_.back() | (1 << (pos_ % 8)));
      ++pos_;
    }
  }
  const std::string& bytes() const { return bytes_; }

 private:
  std::string bytes_;
  size_t pos_ = 0;
};

absl::Status Malformed(absl::string_view what) {
  return absl::DataLossError(absl::StrCat("malformed dictionary: ", what));
}

uint32_t ReadU32(absl::string_view in, size_t at) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(in[at + i]);
  return v;
}

void PutU32(uint32_t v, std::string* out) {
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

// Size of the Huffman tree description at the front of `in` (RFC 8878 4.2.1.1: a
// header byte < 128 is the size of FSE-compressed weights that follow; >= 128 means
// header-127 weights of 4 bits follow).
absl::StatusOr<size_t> HuffmanTreeSize(absl::string_view in) {
  if (in.empty()) return Malformed("no Huffman tree");
  const uint8_t header = static_cast<uint8_t>(in[0]);
  if (header == 0) return Malformed("empty Huffman tree");
  const size_t size = header < 128 ? 1 + header : 1 + (header - 127 + 1) / 2;
  if (size > in.size()) return Malformed("truncated Huffman tree");
  return size;
}

}  // namespace

absl::StatusOr<FseTable> ReadFseTable(absl::string_view in, int max_symbol, int max_log,
                                      size_t* consumed) {
  BitReader bits(in);
  FseTable table;
  table.accuracy_log = static_cast<int>(bits.Peek(4)) + kMinAccuracyLog;
  bits.Skip(4);
  if (table.accuracy_log > max_log) {
    return Malformed(absl::StrCat("accuracy log ", table.accuracy_log, " above ", max_log));
  }
  int remaining = (1 << table.accuracy_log) + 1;
  int threshold = 1 << table.accuracy_log;
  int nb_bits = table.accuracy_log + 1;
  bool previous_zero = false;
  while (remaining > 1) {
    if (previous_zero) {  // 2-bit repeat flags: 3 means "3 more zeros, and go on".
      uint32_t flag;
      do {
        flag = bits.Peek(2);
        bits.Skip(2);
        for (uint32_t i = 0; i < flag; ++i) table.counts.push_back(0);
        if (bits.Overrun()) return Malformed("truncated FSE table");
      } while (flag == 3);
    }
    if (static_cast<int>(table.counts.size()) > max_symbol) {
      return Malformed(absl::StrCat("FSE symbol beyond ", max_symbol));
    }
    const int max = (2 * threshold - 1) - remaining;
    int count;
    if (static_cast<int>(bits.Peek(nb_bits - 1)) < max) {
      count = static_cast<int>(bits.Peek(nb_bits - 1));
      bits.Skip(nb_bits - 1);
    } else {
      count = static_cast<int>(bits.Peek(nb_bits));
      if (count >= threshold) count -= max;
      bits.Skip(nb_bits);
    }
    --count;  // Stored as probability + 1, so that -1 ("below one cell") fits.
    remaining -= std::abs(count);
    table.counts.push_back(static_cast<int16_t>(count));
    previous_zero = count == 0;
    if (remaining < 1 || bits.Overrun()) return Malformed("FSE counts overflow the table");
    while (remaining < threshold) {
      --nb_bits;
      threshold >>= 1;
    }
  }
  *consumed = bits.BytesUsed();
  return table;
}

absl::Status WriteFseTable(const FseTable& table, std::string* out) {
  if (table.accuracy_log < kMinAccuracyLog || table.accuracy_log > 15) {
    return absl::InvalidArgumentError(
        absl::StrCat("FSE accuracy log ", table.accuracy_log, " outside 5..15"));
  }
  int cells = 0;
  for (int16_t c : table.counts) cells += std::abs(c);
  if (cells != 1 << table.accuracy_log) {
    return absl::InvalidArgumentError(absl::StrCat(
        "FSE counts fill ", cells, " cells, not ", 1 << table.accuracy_log));
  }
  BitWriter bits;
  bits.Put(table.accuracy_log - kMinAccuracyLog, 4);
  int remaining = (1 << table.accuracy_log) + 1;
  int threshold = 1 << table.accuracy_log;
  int nb_bits = table.accuracy_log + 1;
  bool previous_zero = false;
  size_t symbol = 0;
  while (remaining > 1) {
    if (previous_zero) {
      size_t zeros = 0;
      while (table.counts[symbol] == 0) {
        ++symbol;
        ++zeros;
      }
      for (; zeros >= 3; zeros -= 3) bits.Put(3, 2);
      bits.Put(static_cast<uint32_t>(zeros), 2);
    }
    const int count = table.counts[symbol++];
    const int max = (2 * threshold - 1) - remaining;
    remaining -= std::abs(count);
    int value = count + 1;
    if (value >= threshold) value += max;
    bits.Put(static_cast<uint32_t>(value), value < max ? nb_bits - 1 : nb_bits);
    previous_zero = value == 1;
    while (remaining < threshold) {
      --nb_bits;
      threshold >>= 1;
    }
  }
  out->append(bits.bytes());
  return absl::OkStatus();
}

absl::StatusOr<DictionaryParts> ParseDictionary(absl::string_view dictionary) {
  if (dictionary.size() < 8 || ReadU32(dictionary, 0) != kDictionaryMagic) {
    return Malformed("no zstd dictionary magic");
  }
  DictionaryParts parts;
  parts.id = ReadU32(dictionary, 4);
  absl::string_view rest = dictionary.substr(8);
  ASSIGN_OR_RETURN(const size_t huffman_size, HuffmanTreeSize(rest));
  parts.huffman_tree = rest.substr(0, huffman_size);
  rest.remove_prefix(huffman_size);
  const struct {
    FseTable* table;
    int max_symbol, max_log;
  } tables[] = {{&parts.offsets, kMaxOffsetSymbol, kMaxOffsetLog},
                {&parts.match_lengths, kMaxMatchLengthSymbol, kMaxMatchLengthLog},
                {&parts.literal_lengths, kMaxLiteralLengthSymbol, kMaxLiteralLengthLog}};
  for (const auto& t : tables) {
    size_t used = 0;
    ASSIGN_OR_RETURN(*t.table, ReadFseTable(rest, t.max_symbol, t.max_log, &used));
    if (used > rest.size()) return Malformed("truncated FSE table");
    rest.remove_prefix(used);
  }
  if (rest.size() < 12) return Malformed("truncated repeat offsets");
  for (int i = 0; i < 3; ++i) parts.repeat_offsets[i] = ReadU32(rest, 4 * i);
  rest.remove_prefix(12);
  parts.content = rest;
  for (uint32_t offset : parts.repeat_offsets) {
    if (offset == 0 || offset > parts.content.size()) {
      return Malformed(absl::StrCat("repeat offset ", offset, " outside the ",
                                    parts.content.size(), "-byte content"));
    }
  }
  return parts;
}

absl::StatusOr<std::string> SerializeDictionary(const DictionaryParts& parts) {
  std::string out;
  PutU32(kDictionaryMagic, &out);
  PutU32(parts.id, &out);
  out.append(parts.huffman_tree.data(), parts.huffman_tree.size());
  RETURN_IF_ERROR(WriteFseTable(parts.offsets, &out));
  RETURN_IF_ERROR(WriteFseTable(parts.match_lengths, &out));
  RETURN_IF_ERROR(WriteFseTable(parts.literal_lengths, &out));
  for (uint32_t offset : parts.repeat_offsets) PutU32(offset, &out);
  out.append(parts.content.data(), parts.content.size());
  return out;
}

}  // namespace dictlog::codec
