#include "codec/record_codec.h"

#include <memory>

#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "codec/varint.h"
#include "codec/zstd_contexts.h"

namespace dictlog::codec {
namespace {

constexpr uint8_t kEncodingMask = 0x03;
// A short frame stores its dictionary id minus this (0: no dictionary); ids below it
// (which the zstd format reserves; no server gives them) keep the whole frame.
constexpr uint32_t kShortDictionaryBase = 32767;
// zstd's largest block (ZSTD_BLOCKSIZE_MAX): a short frame's one block is no larger.
constexpr size_t kMaxBlockBytes = 128 << 10;
// Frame header (RFC 8878 3.1.1.1) of a short frame: descriptor, dictionary id, content
// size; then the block header. At most 1 + 4 + 4 + 3 bytes for kMaxRecordBytes.
constexpr size_t kMaxShortHeaderBytes = FrameParts::kMaxHeaderBytes;
constexpr uint8_t kHasCategoryIndex = 0x04;
// A first byte at or above this is not a flags byte: the value is a bare raw payload.
constexpr uint8_t kFirstBareByte = 0x08;

bool CanStoreBare(absl::string_view payload, uint32_t category_index) {
  return category_index == 0 &&
         (payload.empty() || static_cast<uint8_t>(payload.front()) >= kFirstBareByte);
}

absl::Status ZstdStatus(size_t code, absl::string_view what) {
  if (!ZSTD_isError(code)) return absl::OkStatus();
  return absl::InternalError(absl::StrCat(what, ": ", ZSTD_getErrorName(code)));
}

absl::Status ConfigureCompression(ZSTD_CCtx* cctx, const EncodeOptions& options) {
  ZSTD_CCtx_reset(cctx, ZSTD_reset_session_and_parameters);
  RETURN_IF_ERROR(ZstdStatus(
      ZSTD_CCtx_setParameter(cctx, ZSTD_c_format, ZSTD_f_zstd1_magicless), "format"));
  RETURN_IF_ERROR(ZstdStatus(
      ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, 1), "content size"));
  RETURN_IF_ERROR(
      ZstdStatus(ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, options.checksum ? 1 : 0),
                 "checksum"));
  const bool compact = options.dictionary != nullptr && options.dictionary->compact();
  if (!options.compress_literals.value_or(!compact)) {
    RETURN_IF_ERROR(ZstdStatus(
        ZSTD_CCtx_setParameter(cctx, ZSTD_c_literalCompressionMode, ZSTD_ps_disable),
        "literals"));
  }
  if (options.dictionary != nullptr) {
    return ZstdStatus(ZSTD_CCtx_refCDict(cctx, options.dictionary->cdict()), "dict");
  }
  return ZstdStatus(ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel,
                                           options.compression_level),
                    "level");
}

void AppendHeader(Encoding encoding, uint32_t category_index, std::string* out) {
  uint8_t flags = static_cast<uint8_t>(encoding);
  if (category_index != 0) flags |= kHasCategoryIndex;
  out->push_back(static_cast<char>(flags));
  if (category_index != 0) PutVarint32(category_index, out);
}

// Parses a magicless frame's header into *view; its size to *header_size if given.
absl::Status ParseFrame(absl::string_view frame, RecordView* view,
                        size_t* header_size = nullptr) {
  ZSTD_frameHeader header;
  const size_t rc = ZSTD_getFrameHeader_advanced(&header, frame.data(), frame.size(),
                                                 ZSTD_f_zstd1_magicless);
  if (ZSTD_isError(rc) || rc > 0 || header.frameType != ZSTD_frame) {
    return absl::DataLossError("stored record has a malformed zstd frame header");
  }
  if (header.frameContentSize == ZSTD_CONTENTSIZE_UNKNOWN ||
      header.frameContentSize > kMaxRecordBytes) {
    return absl::DataLossError(absl::StrCat(
        "stored frame declares an unknown or oversized content size (limit ",
        kMaxRecordBytes, " bytes)"));
  }
  view->dictionary_id = header.dictID;
  view->content_size = header.frameContentSize;
  if (header_size != nullptr) *header_size = header.headerSize;
  return absl::OkStatus();
}

// Writes the frame and block headers a short frame stands for (the ones zstd writes
// for a single-segment frame of one last compressed block, no checksum) to `out`
// (kMaxShortHeaderBytes) and returns their size.
size_t ShortFrameHeader(uint32_t dictionary_id, uint64_t content_size, size_t block_size,
                        char* out) {
  const int dict_code = (dictionary_id > 0) + (dictionary_id >= 256) + (dictionary_id >= 65536);
  const int size_code = (content_size >= 256) + (content_size >= 65536 + 256);
  size_t n = 0;
  out[n++] = static_cast<char>((size_code << 6) | 0x20 | dict_code);  // 0x20: single segment.
  const int dict_bytes = dict_code == 3 ? 4 : dict_code;
  for (int i = 0; i < dict_bytes; ++i) out[n++] = static_cast<char>(dictionary_id >> (8 * i));
  const uint64_t size_field = size_code == 1 ? content_size - 256 : content_size;
  const int size_bytes = size_code == 0 ? 1 : size_code == 1 ? 2 : 4;
  for (int i = 0; i < size_bytes; ++i) out[n++] = static_cast<char>(size_field >> (8 * i));
  const uint32_t block_header = static_cast<uint32_t>(block_size << 3) | 0x05;  // Last, compressed.
  for (int i = 0; i < 3; ++i) out[n++] = static_cast<char>(block_header >> (8 * i));
  return n;
}

absl::Status ParseShortFrame(absl::string_view body, RecordView* view) {
  uint32_t dictionary = 0;
  if (!GetVarint32(&body, &dictionary) || !GetVarint64(&body, &view->content_size) ||
      dictionary > UINT32_MAX - kShortDictionaryBase) {
    return absl::DataLossError("stored short frame has a malformed header");
  }
  if (view->content_size > kMaxRecordBytes || body.empty() || body.size() > kMaxBlockBytes) {
    return absl::DataLossError(absl::StrCat(
        "stored short frame declares an oversized content size (limit ", kMaxRecordBytes,
        " bytes) or has an empty or oversized block"));
  }
  view->dictionary_id = dictionary == 0 ? 0 : dictionary + kShortDictionaryBase;
  view->body = body;
  return absl::OkStatus();
}

// Where a frame of at most `bound` bytes is compressed: this thread's buffer when it
// fits (64 KiB, kept for the thread's life: handler and encode threads are pooled, so
// a few MiB in all), else a new one in *large.
constexpr size_t kFrameScratchBytes = 64 << 10;

char* FrameScratch(size_t bound, std::unique_ptr<char[]>* large) {
  if (bound > kFrameScratchBytes) {
    large->reset(new char[bound]);
    return large->get();
  }
  thread_local std::unique_ptr<char[]> scratch(new char[kFrameScratchBytes]);
  return scratch.get();
}

absl::Status BlockEntryError() {
  return absl::FailedPreconditionError(
      "stored record is an entry of a block: it decodes only through its block");
}

}  // namespace

absl::Status EncodeRecord(absl::string_view payload, const EncodeOptions& options,
                          std::string* out) {
  ZSTD_CCtx* cctx = ThreadCompressionContext();
  RETURN_IF_ERROR(ConfigureCompression(cctx, options));
  // The frame goes to a buffer first, so `out` grows once, by what it keeps (not by
  // zstd's bound, zero-filled, then cut back).
  const size_t bound = ZSTD_compressBound(payload.size());
  std::unique_ptr<char[]> large;
  char* frame = FrameScratch(bound, &large);
  const size_t frame_size =
      ZSTD_compress2(cctx, frame, bound, payload.data(), payload.size());
  RETURN_IF_ERROR(ZstdStatus(frame_size, "compress"));
  const absl::string_view framed(frame, frame_size);
  const size_t start = out->size();
  if (options.short_frame) {
    RETURN_IF_ERROR(AppendFrameValue(framed, options.category_index, out));
  } else {
    AppendHeader(Encoding::kZstdFrame, options.category_index, out);
    out->append(framed.data(), framed.size());
  }
  // A checksummed value (a block, ADR 0007) keeps its frame even when it does not
  // shrink: stored raw, a flipped byte would read back as a wrong payload.
  std::string raw_header;  // At most 6 bytes: no allocation.
  if (!CanStoreBare(payload, options.category_index)) {
    AppendHeader(Encoding::kRaw, options.category_index, &raw_header);
  }
  const size_t raw_size = payload.size() + raw_header.size();
  if (options.checksum || out->size() - start < raw_size) return absl::OkStatus();
  out->resize(start);
  EncodeRaw(payload, options.category_index, out);  // The frame does not shrink it.
  return absl::OkStatus();
}

absl::Status AppendFrameValue(absl::string_view frame, uint32_t category_index,
                              std::string* out) {
  RecordView view;
  size_t header_size = 0;
  RETURN_IF_ERROR(ParseFrame(frame, &view, &header_size));
  const size_t prefix = header_size + 3;  // Frame header and first block header.
  char rebuilt[kMaxShortHeaderBytes];
  if (frame.size() > prefix && frame.size() - prefix <= kMaxBlockBytes &&
      (view.dictionary_id == 0 || view.dictionary_id > kShortDictionaryBase) &&
      ShortFrameHeader(view.dictionary_id, view.content_size, frame.size() - prefix,
                       rebuilt) == prefix &&
      frame.substr(0, prefix) == absl::string_view(rebuilt, prefix)) {
    AppendHeader(Encoding::kShortFrame, category_index, out);
    PutVarint32(view.dictionary_id == 0 ? 0 : view.dictionary_id - kShortDictionaryBase, out);
    PutVarint64(view.content_size, out);
    out->append(frame.data() + prefix, frame.size() - prefix);
    return absl::OkStatus();
  }
  AppendHeader(Encoding::kZstdFrame, category_index, out);
  out->append(frame.data(), frame.size());
  return absl::OkStatus();
}

void EncodeRaw(absl::string_view payload, uint32_t category_index, std::string* out) {
  if (!CanStoreBare(payload, category_index)) {
    AppendHeader(Encoding::kRaw, category_index, out);
  }
  out->append(payload.data(), payload.size());
}

absl::StatusOr<RecordView> ParseRecord(absl::string_view value) {
  RecordView view;
  if (value.empty() || static_cast<uint8_t>(value.front()) >= kFirstBareByte) {
    view.body = value;  // A bare raw payload.
    view.content_size = value.size();
    return view;
  }
  const uint8_t flags = static_cast<uint8_t>(value.front());
  value.remove_prefix(1);
  view.encoding = static_cast<Encoding>(flags & kEncodingMask);
  if ((flags & kHasCategoryIndex) != 0 &&
      (!GetVarint32(&value, &view.category_index) || view.category_index == 0)) {
    return absl::DataLossError("stored record has a malformed category index");
  }
  view.body = value;
  if (view.encoding == Encoding::kRaw) {
    view.content_size = value.size();
    return view;
  }
  if (view.encoding == Encoding::kBlockEntry) {
    if (!GetVarint64(&value, &view.block_back) ||
        !GetVarint32(&value, &view.block_entry) || !value.empty()) {
      return absl::DataLossError("stored block entry is malformed");
    }
    return view;
  }
  if (view.encoding == Encoding::kShortFrame) {
    RETURN_IF_ERROR(ParseShortFrame(value, &view));
    return view;
  }
  RETURN_IF_ERROR(ParseFrame(value, &view));
  return view;
}

absl::StatusOr<FrameParts> SplitFrame(const RecordView& view) {
  if (!view.framed()) return absl::FailedPreconditionError("stored record is not a zstd frame");
  FrameParts parts;
  parts.body = view.body;
  if (view.encoding == Encoding::kShortFrame) {
    parts.header_size = ShortFrameHeader(view.dictionary_id, view.content_size,
                                         view.body.size(), parts.header);
  }
  return parts;
}

absl::StatusOr<absl::string_view> MagiclessFrame(const RecordView& view,
                                                 std::string* scratch) {
  if (view.encoding == Encoding::kZstdFrame) return view.body;
  ASSIGN_OR_RETURN(const FrameParts parts, SplitFrame(view));
  scratch->assign(parts.header, parts.header_size);
  scratch->append(parts.body.data(), parts.body.size());
  return absl::string_view(*scratch);
}

absl::Status EncodeBlockEntry(uint32_t category_index, uint64_t back, uint32_t entry,
                              std::string* out) {
  AppendHeader(Encoding::kBlockEntry, category_index, out);
  PutVarint64(back, out);
  PutVarint32(entry, out);
  return absl::OkStatus();
}

absl::StatusOr<std::string> StandardFrame(absl::string_view value) {
  ASSIGN_OR_RETURN(const RecordView view, ParseRecord(value));
  if (view.encoding == Encoding::kBlockEntry) return BlockEntryError();
  std::string frame;
  if (view.framed()) {
    ASSIGN_OR_RETURN(const FrameParts parts, SplitFrame(view));
    frame.reserve(4 + parts.header_size + parts.body.size());
    const uint32_t magic = ZSTD_MAGICNUMBER;
    for (int i = 0; i < 4; ++i) frame.push_back(static_cast<char>((magic >> (8 * i)) & 0xff));
    frame.append(parts.header, parts.header_size).append(parts.body.data(), parts.body.size());
    return frame;
  }
  frame.resize(ZSTD_compressBound(view.body.size()));
  const size_t n = ZSTD_compress(frame.data(), frame.size(), view.body.data(),
                                 view.body.size(), 1);
  RETURN_IF_ERROR(ZstdStatus(n, "compress"));
  frame.resize(n);
  return frame;
}

absl::StatusOr<DecodedRecord> DecodeRecord(absl::string_view value,
                                           const DictionaryLookup& dictionaries) {
  ASSIGN_OR_RETURN(const RecordView view, ParseRecord(value));
  std::shared_ptr<const DecoderDictionary> dictionary;
  if (view.framed() && view.dictionary_id != 0) {
    dictionary = dictionaries.Find(view.dictionary_id);
  }
  return DecodeParsed(view, dictionary.get());
}

absl::StatusOr<DecodedRecord> DecodeParsed(const RecordView& view,
                                           const DecoderDictionary* dictionary) {
  DecodedRecord record;
  record.category_index = view.category_index;
  if (view.encoding == Encoding::kBlockEntry) return BlockEntryError();
  if (view.encoding == Encoding::kRaw) {
    record.payload.assign(view.body.data(), view.body.size());
    return record;
  }
  if (view.dictionary_id != 0 && dictionary == nullptr) {
    return absl::DataLossError(
        absl::StrCat("stored frame names unknown dictionary id ", view.dictionary_id));
  }
  if (view.content_size > kMaxRecordBytes) {  // ParseRecord never makes such a view.
    return absl::DataLossError("stored frame declares an oversized content size");
  }
  // A short frame's header is put back in this thread's buffer (at most a block and
  // its headers: 128 KiB and 12 bytes, kept for the thread's life).
  thread_local std::string scratch;
  ASSIGN_OR_RETURN(const absl::string_view frame, MagiclessFrame(view, &scratch));
  ZSTD_DCtx* dctx = ThreadDecompressionContext();
  ZSTD_DCtx_refDDict(dctx, dictionary ? dictionary->ddict() : nullptr);
  record.payload.resize(view.content_size);
  const size_t n = ZSTD_decompressDCtx(dctx, record.payload.data(),
                                       record.payload.size(), frame.data(), frame.size());
  if (ZSTD_isError(n) || n != view.content_size) {
    return absl::DataLossError(absl::StrCat(
        "stored frame does not decode: ",
        ZSTD_isError(n) ? ZSTD_getErrorName(n) : "content size mismatch"));
  }
  return record;
}

}  // namespace dictlog::codec
