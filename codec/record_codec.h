// The stored form of one record (a RocksDB value in the records column family):
//
//   record_value  := bare_raw | flags:u8 [category_index:varint] body
//   bare_raw      := the payload itself, empty or starting with a byte >= 0x08
//   flags         := a byte < 0x08: bits 0-1 encoding (0 raw, 1 zstd magicless frame,
//                    2 block entry; 3 reserved), bit 2 category index present
//   body          := payload (raw) | zstd frame without its 4-byte magic number
//                  | back:varint entry:varint (block entry: the record is entry
//                    `entry` of the block keyed by seq - back; see block_format.h)
//
// A frame always carries its content size; it carries the id of the dictionary it was
// compressed with (no id field when compressed without one), and a content checksum
// when its header's checksum flag says so (blocks; EncodeOptions::checksum). A record is stored in the
// smallest of its forms, so it never takes more than its payload, except one byte when
// its payload starts with a byte < 0x08 or it needs a category index.
// docs/storage-format.md has the full grammar and docs/adr/0002-frame-format.md the
// reasons.
//
// All functions are thread-safe: they use the calling thread's zstd contexts.
#ifndef DICTLOG_CODEC_RECORD_CODEC_H_
#define DICTLOG_CODEC_RECORD_CODEC_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "codec/dictionary.h"

namespace dictlog::codec {

// No record decodes to more than this, whatever its frame declares (guards against
// decompression bombs in corrupt or hostile frames).
inline constexpr size_t kMaxRecordBytes = 64 << 20;

enum class Encoding : uint8_t { kRaw = 0, kZstdFrame = 1, kBlockEntry = 2 };

struct EncodeOptions {
  // zstd level; ignored when `dictionary` is set (it carries its own level).
  int compression_level = 3;
  // Borrowed for the call; nullptr compresses without a dictionary.
  const EncoderDictionary* dictionary = nullptr;
  // Index of the record's category in its pool; 0 (the pool's own name) costs nothing.
  uint32_t category_index = 0;
  // Whether literals (bytes no match covers) are Huffman-coded. Unset: yes, except
  // with a compact dictionary (whose frames keep them raw; see dictionary.h). Set only
  // to measure the alternative (benchmarks).
  std::optional<bool> compress_literals;
  // Adds zstd's content checksum (4 bytes: the low half of the payload's XXH64) to the
  // frame; the frame header says so, and decoding then verifies it (DATA_LOSS on a
  // mismatch). Default off: record frames rely on RocksDB's checksums; block mode
  // sets it for blocks (docs/adr/0007-frame-checksums.md). With it the value is always
  // a frame, also when the frame is not smaller than the payload (a one-record block of
  // an incompressible line); without it such a record is stored raw, unchecked.
  bool checksum = false;
};

// Appends the stored form of `payload` to *out. INTERNAL only if zstd fails.
absl::Status EncodeRecord(absl::string_view payload, const EncodeOptions& options,
                          std::string* out);

// Appends the raw stored form of `payload` (no frame): the bare payload when it can
// be, otherwise a flags byte, the category index if not 0, and the payload.
void EncodeRaw(absl::string_view payload, uint32_t category_index, std::string* out);

// Appends the stored form of a record that is entry `entry` of the block keyed by its
// seq minus `back` (block mode; docs/storage-format.md).
absl::Status EncodeBlockEntry(uint32_t category_index, uint64_t back, uint32_t entry,
                              std::string* out);

// A parsed stored record; `body` points into the parsed value.
struct RecordView {
  Encoding encoding = Encoding::kRaw;
  uint32_t category_index = 0;
  absl::string_view body;
  uint32_t dictionary_id = 0;  // 0: raw, or a frame without dictionary.
  uint64_t content_size = 0;   // Payload size the record decodes to (0: block entry).
  // kBlockEntry only: the block's key is the record's seq minus block_back, and the
  // record is its entry number block_entry.
  uint64_t block_back = 0;
  uint32_t block_entry = 0;
};

// Parses the header of a stored record (and of its frame). DATA_LOSS if malformed.
absl::StatusOr<RecordView> ParseRecord(absl::string_view value);

struct DecodedRecord {
  uint32_t category_index = 0;
  std::string payload;
};

// DecodeRecord's second half, for callers that parsed the record and looked up its
// dictionary already (`dictionary`: the one view.dictionary_id names, nullptr if none
// is known; DATA_LOSS then, unless the id is 0).
absl::StatusOr<DecodedRecord> DecodeParsed(const RecordView& view,
                                           const DecoderDictionary* dictionary);

// Decodes a stored record. DATA_LOSS if it is malformed, names a dictionary that
// `dictionaries` does not know, or fails to decompress. A block entry cannot be decoded
// alone (FAILED_PRECONDITION): server/block/block_reader.h reads it through its block.
absl::StatusOr<DecodedRecord> DecodeRecord(absl::string_view value,
                                           const DictionaryLookup& dictionaries);

// The record as a standard zstd frame (RFC 8878) that `zstd -d` (with `-D` and the
// named dictionary when RecordView::dictionary_id is not 0) decodes to its payload: a
// stored frame with its magic number restored, or a raw record wrapped in a new frame.
// FAILED_PRECONDITION for a block entry.
absl::StatusOr<std::string> StandardFrame(absl::string_view value);

}  // namespace dictlog::codec

#endif  // DICTLOG_CODEC_RECORD_CODEC_H_
