// The stored form of one record (a RocksDB value in the records column family):
//
//   record_value  := bare_raw | flags:u8 [category_index:varint] body
//   bare_raw      := the payload itself, empty or starting with a byte >= 0x08
//   flags         := a byte < 0x08: bits 0-1 encoding (0 raw, 1 zstd magicless frame,
//                    2 block entry, 3 zstd short frame), bit 2 category index present
//   body          := payload (raw) | zstd frame without its 4-byte magic number
//                  | back:varint entry:varint (block entry: the record is entry
//                    `entry` of the block keyed by seq - back; see block_format.h)
//                  | dictionary:varint content_size:varint block (short frame: the
//                    one compressed block of a frame whose header and block header
//                    say nothing but these two numbers; dictionary is the id minus
//                    32767, 0 for none; docs/adr/0049-short-frames.md)
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

// kZstdFrame and kShortFrame are both zstd frames (RecordView::framed()): a short frame
// is a magicless frame with its header rebuilt from the dictionary id and content size.
enum class Encoding : uint8_t { kRaw = 0, kZstdFrame = 1, kBlockEntry = 2, kShortFrame = 3 };

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
  // Stores a frame whose header rebuilds from its dictionary id and content size (one
  // compressed block, no checksum, a dictionary id of 32768 or more, or none) as a
  // short frame, 5 bytes smaller for a log line. Off: always the magicless frame (the
  // form cluster mode logs; benchmarks measure the alternative).
  bool short_frame = true;
};

// Appends the stored form of `payload` to *out. INTERNAL only if zstd fails.
absl::Status EncodeRecord(absl::string_view payload, const EncodeOptions& options,
                          std::string* out);

// Appends the stored form of a record whose magicless zstd frame is `frame` (as
// EncodeRecord would with a frame it compressed): a short frame when the frame's
// header rebuilds exactly from its dictionary id and content size, else the frame.
// `frame` is not checked beyond its header; DATA_LOSS if that does not parse.
absl::Status AppendFrameValue(absl::string_view frame, uint32_t category_index,
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
  // The payload (raw), the magicless frame (kZstdFrame), the frame's one block's
  // content (kShortFrame: MagiclessFrame puts its header back) or the entry's numbers.
  absl::string_view body;
  uint32_t dictionary_id = 0;  // 0: raw, or a frame without dictionary.
  uint64_t content_size = 0;   // Payload size the record decodes to (0: block entry).
  // kBlockEntry only: the block's key is the record's seq minus block_back, and the
  // record is its entry number block_entry.
  uint64_t block_back = 0;
  uint32_t block_entry = 0;

  // Whether the record is a zstd frame (kZstdFrame or kShortFrame).
  bool framed() const {
    return encoding == Encoding::kZstdFrame || encoding == Encoding::kShortFrame;
  }
};

// Parses the header of a stored record (and of its frame). DATA_LOSS if malformed.
absl::StatusOr<RecordView> ParseRecord(absl::string_view value);

// A framed view's magicless zstd frame as two parts: the frame and block headers a
// short frame leaves out (none for kZstdFrame), then view.body.
struct FrameParts {
  static constexpr size_t kMaxHeaderBytes = 12;
  char header[kMaxHeaderBytes];
  size_t header_size = 0;
  absl::string_view body;
  absl::string_view header_view() const { return absl::string_view(header, header_size); }
};
// FAILED_PRECONDITION if the view is not framed.
absl::StatusOr<FrameParts> SplitFrame(const RecordView& view);

// The magicless zstd frame of a framed view: view.body for kZstdFrame; for kShortFrame
// the rebuilt frame, written to *scratch (which must outlive the result's use).
// FAILED_PRECONDITION if the view is not framed.
absl::StatusOr<absl::string_view> MagiclessFrame(const RecordView& view,
                                                 std::string* scratch);

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
