#include "codec/record_codec.h"

#include <map>
#include <memory>
#include <string>

#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>

#include "gtest/gtest.h"
#include "codec/dictionary_arena.h"
#include "codec/test_dictionary.h"

namespace dictlog::codec {
namespace {

using MapLookup = MapDictionaryLookup;

std::string Encode(absl::string_view payload, const EncodeOptions& options = {}) {
  std::string out;
  absl::Status status = EncodeRecord(payload, options, &out);
  EXPECT_TRUE(status.ok()) << status;
  return out;
}

TEST(RecordCodecTest, CompressibleRecordRoundTripsAsFrameWithoutDictionary) {
  const std::string payload(500, 'a');
  const std::string value = Encode(payload);
  ASSERT_LT(value.size(), payload.size());
  absl::StatusOr<RecordView> view = ParseRecord(value);
  ASSERT_TRUE(view.ok()) << view.status();
  EXPECT_EQ(view->encoding, Encoding::kShortFrame);
  EXPECT_EQ(view->dictionary_id, 0u);
  EXPECT_EQ(view->content_size, payload.size());
  MapLookup none;
  absl::StatusOr<DecodedRecord> decoded = DecodeRecord(value, none);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(decoded->payload, payload);
}

TEST(RecordCodecTest, IncompressibleTextIsStoredBareWithoutExpansion) {
  const std::string payload = "x7Qz!k";
  const std::string value = Encode(payload);
  EXPECT_EQ(value, payload);
  absl::StatusOr<RecordView> view = ParseRecord(value);
  ASSERT_TRUE(view.ok());
  EXPECT_EQ(view->encoding, Encoding::kRaw);
  MapLookup none;
  EXPECT_EQ(DecodeRecord(value, none)->payload, payload);
}

TEST(RecordCodecTest, PayloadStartingWithAFlagsByteGetsOneHeaderByte) {
  MapLookup none;
  for (char first = 0; first < 8; ++first) {
    const std::string payload = std::string(1, first) + "Qz";
    const std::string value = Encode(payload);
    EXPECT_EQ(value.size(), payload.size() + 1);
    absl::StatusOr<DecodedRecord> decoded = DecodeRecord(value, none);
    ASSERT_TRUE(decoded.ok()) << decoded.status();
    EXPECT_EQ(decoded->payload, payload);
  }
}

TEST(RecordCodecTest, StoredFormIsNeverLargerThanPayloadPlusOneByte) {
  MapLookup none;
  std::string payload;
  for (int i = 0; i < 600; ++i) {
    payload.push_back(static_cast<char>((i * 7919) % 251));
    const std::string value = Encode(payload);
    ASSERT_LE(value.size(), payload.size() + 1) << i;
    ASSERT_EQ(DecodeRecord(value, none)->payload, payload) << i;
  }
}

TEST(RecordCodecTest, EmptyPayloadIsAnEmptyValue) {
  MapLookup none;
  EXPECT_EQ(Encode(""), "");
  absl::StatusOr<DecodedRecord> decoded = DecodeRecord("", none);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(decoded->payload, "");
}

TEST(RecordCodecTest, CategoryIndexRoundTrips) {
  EncodeOptions options;
  options.category_index = 300;  // Two varint bytes.
  MapLookup none;
  for (const std::string& payload : {std::string(400, 'b'), std::string("q")}) {
    absl::StatusOr<DecodedRecord> decoded = DecodeRecord(Encode(payload, options), none);
    ASSERT_TRUE(decoded.ok()) << decoded.status();
    EXPECT_EQ(decoded->category_index, 300u);
    EXPECT_EQ(decoded->payload, payload);
  }
}

// Frames are compressed in a per-thread buffer of 64 KiB, or a buffer of their own when
// zstd's bound is larger; either way the value lands after what *out already holds.
TEST(RecordCodecTest, FramesOfEverySizeAppendAfterWhatOutHolds) {
  std::string large;
  for (int i = 0; large.size() < (200 << 10); ++i) {
    large += "2026-11-28 12:00:" + std::to_string(i % 60) + " host-" + std::to_string(i % 7) +
             " request " + std::to_string(i * 7919) + " done\n";
  }
  MapLookup none;
  for (const std::string& payload : {std::string(300, 'c'), large, std::string(70, 'd')}) {
    std::string out = "prefix";
    ASSERT_TRUE(EncodeRecord(payload, EncodeOptions(), &out).ok());
    ASSERT_EQ(out.substr(0, 6), "prefix");
    const std::string value = out.substr(6);
    absl::StatusOr<RecordView> view = ParseRecord(value);
    ASSERT_TRUE(view.ok()) << view.status();
    // One block rebuilds from the short form; 200 KiB take two blocks and stay whole.
    EXPECT_EQ(view->encoding,
              payload.size() > (128 << 10) ? Encoding::kZstdFrame : Encoding::kShortFrame)
        << payload.size();
    EXPECT_LT(value.size(), payload.size());
    absl::StatusOr<DecodedRecord> decoded = DecodeRecord(value, none);
    ASSERT_TRUE(decoded.ok()) << decoded.status();
    EXPECT_EQ(decoded->payload, payload);
  }
}

TEST(RecordCodecTest, FrameCarriesDictionaryIdAndDecodesWithIt) {
  const std::vector<std::string> lines = SyntheticLogLines(2000, 1);
  const std::string content = TrainDictionaryForTest(lines, 8192, 40001);
  auto encoder = EncoderDictionary::Create(content, 3);
  auto decoder = DecoderDictionary::Create(content);
  ASSERT_TRUE(encoder.ok()) << encoder.status();
  ASSERT_TRUE(decoder.ok()) << decoder.status();
  MapLookup lookup;
  lookup.Add(*decoder);

  const std::vector<std::string> fresh = SyntheticLogLines(200, 2);
  size_t with_dict = 0, without_dict = 0;
  for (const std::string& line : fresh) {
    EncodeOptions options;
    options.dictionary = encoder->get();
    const std::string value = Encode(line, options);
    with_dict += value.size();
    without_dict += Encode(line).size();
    absl::StatusOr<RecordView> view = ParseRecord(value);
    ASSERT_TRUE(view.ok());
    ASSERT_EQ(view->encoding, Encoding::kShortFrame);
    EXPECT_EQ(view->dictionary_id, 40001u);
    absl::StatusOr<DecodedRecord> decoded = DecodeRecord(value, lookup);
    ASSERT_TRUE(decoded.ok()) << decoded.status();
    EXPECT_EQ(decoded->payload, line);
  }
  EXPECT_LT(with_dict * 10, without_dict * 8) << "dictionary should save > 20%";
}

TEST(RecordCodecTest, UnknownDictionaryIsDataLossNamingTheId) {
  const std::string content = TrainDictionaryForTest(SyntheticLogLines(2000, 3), 4096,
                                                     50000);
  auto encoder = EncoderDictionary::Create(content, 3);
  ASSERT_TRUE(encoder.ok());
  EncodeOptions options;
  options.dictionary = encoder->get();
  MapLookup empty;
  absl::StatusOr<DecodedRecord> decoded =
      DecodeRecord(Encode(SyntheticLogLines(1, 9)[0], options), empty);
  EXPECT_EQ(decoded.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(decoded.status().message().find("50000"), std::string::npos);
}

TEST(RecordCodecTest, MalformedValuesAreDataLoss) {
  MapLookup none;
  const std::string good = Encode(std::string(300, 'z'));
  const std::string cases[] = {
      std::string(1, '\x02') + "abc",      // block entry with bytes left over
      std::string(1, '\x07') + "abc",      // short frame with category, empty block
      std::string(1, '\x05'),              // category index missing
      good.substr(0, 3),                   // truncated frame header
      good.substr(0, good.size() - 2),     // truncated frame body
  };
  for (const std::string& value : cases) {
    EXPECT_EQ(DecodeRecord(value, none).status().code(), absl::StatusCode::kDataLoss)
        << "value of " << value.size() << " bytes";
  }
}

TEST(RecordCodecTest, OversizedDeclaredContentIsRejectedBeforeDecoding) {
  // Magicless frame header: descriptor 0xA0 = single segment, 4-byte content size.
  std::string value(1, '\x01');
  value += '\xA0';
  const uint32_t huge = kMaxRecordBytes + 1;
  value.append(reinterpret_cast<const char*>(&huge), 4);
  value += std::string("\x01\x00\x00", 3);
  MapLookup none;
  absl::StatusOr<RecordView> view = ParseRecord(value);
  EXPECT_EQ(view.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(view.status().message().find("oversized"), std::string::npos);
}

// Decompression bombs: a stored value whose frame declares no content size, or more
// than kMaxRecordBytes, is DATA_LOSS from ParseRecord, before any output buffer is
// sized from the declaration; every decode path (single, batch, standard frame) parses
// first.
std::string MagiclessFrame(absl::string_view payload, bool content_size) {
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_format, ZSTD_f_zstd1_magicless);
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, content_size ? 1 : 0);
  std::string frame(ZSTD_compressBound(payload.size()), '\0');
  const size_t n =
      ZSTD_compress2(cctx, frame.data(), frame.size(), payload.data(), payload.size());
  ZSTD_freeCCtx(cctx);
  EXPECT_FALSE(ZSTD_isError(n));
  frame.resize(n);
  return frame;
}

// A stored frame value: flags byte 0x01, then a magicless header declaring `size` in
// an 8-byte content size field (descriptor 0xE0: single segment, FCS 8 bytes), then
// one empty last raw block.
std::string DeclaringFrame(uint64_t size) {
  std::string value = "\x01\xE0";
  for (int i = 0; i < 8; ++i) value += static_cast<char>((size >> (8 * i)) & 0xff);
  value += std::string("\x01\x00\x00", 3);
  return value;
}

TEST(RecordCodecTest, UnknownContentSizeIsRejectedOnEveryDecodePath) {
  const std::string value = "\x01" + MagiclessFrame(std::string(1000, 'z'), false);
  MapLookup none;
  absl::StatusOr<RecordView> view = ParseRecord(value);
  EXPECT_EQ(view.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(view.status().message().find("unknown"), std::string::npos) << view.status();
  EXPECT_EQ(DecodeRecord(value, none).status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(StandardFrame(value).status().code(), absl::StatusCode::kDataLoss);
  // The same payload with its size declared decodes.
  const std::string sized = "\x01" + MagiclessFrame(std::string(1000, 'z'), true);
  absl::StatusOr<DecodedRecord> record = DecodeRecord(sized, none);
  ASSERT_TRUE(record.ok()) << record.status();
  EXPECT_EQ(record->payload, std::string(1000, 'z'));
}

TEST(RecordCodecTest, DeclaredSizesAboveTheLimitAreRejected) {
  MapLookup none;
  for (uint64_t size : {uint64_t{kMaxRecordBytes} + 1, uint64_t{1} << 40,
                        ~uint64_t{0} - 2}) {
    const std::string value = DeclaringFrame(size);
    EXPECT_EQ(ParseRecord(value).status().code(), absl::StatusCode::kDataLoss) << size;
    EXPECT_EQ(DecodeRecord(value, none).status().code(), absl::StatusCode::kDataLoss)
        << size;
  }
  // At the limit the header parses (the frame itself then fails to decode: it holds
  // no content), so the limit is exactly kMaxRecordBytes.
  absl::StatusOr<RecordView> at_limit = ParseRecord(DeclaringFrame(kMaxRecordBytes));
  ASSERT_TRUE(at_limit.ok()) << at_limit.status();
  EXPECT_EQ(at_limit->content_size, kMaxRecordBytes);
  EXPECT_EQ(DecodeRecord(DeclaringFrame(kMaxRecordBytes), none).status().code(),
            absl::StatusCode::kDataLoss);
}

TEST(RecordCodecTest, ContentLargerThanDeclaredIsDataLossNotOverflow) {
  // A real frame of 1000 bytes whose header is rewritten to declare 256.
  std::string frame = MagiclessFrame(std::string(1000, 'q'), true);
  ASSERT_EQ(static_cast<uint8_t>(frame[0]) >> 6, 1);      // 2-byte content size field,
  ASSERT_EQ(static_cast<uint8_t>(frame[0]) & 0x20, 0x20);  // single segment.
  frame[1] = 0;  // The field holds size - 256: declares 256 bytes.
  frame[2] = 0;
  MapLookup none;
  EXPECT_EQ(DecodeRecord("\x01" + frame, none).status().code(),
            absl::StatusCode::kDataLoss);
}

// Flips every byte of the value after the flags byte, one at a time, and counts the
// decodes that return a wrong payload without an error.
int WrongPayloadsAfterSingleFlips(const std::string& value, const std::string& payload) {
  MapLookup none;
  int wrong = 0;
  for (size_t i = 1; i < value.size(); ++i) {
    std::string flipped = value;
    flipped[i] = static_cast<char>(flipped[i] ^ 0x20);
    absl::StatusOr<DecodedRecord> decoded = DecodeRecord(flipped, none);
    if (decoded.ok() && decoded->payload != payload) ++wrong;
    if (!decoded.ok()) {
      EXPECT_EQ(decoded.status().code(), absl::StatusCode::kDataLoss);
    }
  }
  return wrong;
}

TEST(RecordCodecTest, ChecksummedFrameTurnsEveryFlippedByteIntoDataLoss) {
  const std::string payload =
      "081109 203615 148 INFO dfs.DataNode$PacketResponder: PacketResponder 1 for block "
      "blk_38865049064139660 terminating; 081109 203615 148 INFO dfs.DataNode";
  EncodeOptions with;
  with.checksum = true;
  const std::string checked = Encode(payload, with);
  EncodeOptions whole;
  whole.short_frame = false;
  const std::string plain = Encode(payload, whole);
  ASSERT_EQ(ParseRecord(checked)->encoding, Encoding::kZstdFrame);
  EXPECT_EQ(checked.size(), plain.size() + 4);
  MapLookup none;
  ASSERT_EQ(DecodeRecord(checked, none)->payload, payload);
  EXPECT_EQ(WrongPayloadsAfterSingleFlips(checked, payload), 0);
  // Without the checksum, a flipped literal decodes to a wrong payload: what the
  // checksum is for (and why it must stay readable: old frames have none).
  EXPECT_GT(WrongPayloadsAfterSingleFlips(plain, payload), 0);
}

TEST(RecordCodecTest, ChecksummedValueStaysAFrameWhenItDoesNotShrink) {
  // Too short and varied to compress: stored raw without the checksum, and then a
  // flipped byte reads back wrong. A short block (one record) must not be stored so.
  const std::string payload = "q7#Zx!9";
  EncodeOptions with;
  with.checksum = true;
  const std::string checked = Encode(payload, with);
  ASSERT_EQ(ParseRecord(Encode(payload))->encoding, Encoding::kRaw);
  ASSERT_EQ(ParseRecord(checked)->encoding, Encoding::kZstdFrame);
  MapLookup none;
  ASSERT_EQ(DecodeRecord(checked, none)->payload, payload);
  EXPECT_EQ(WrongPayloadsAfterSingleFlips(checked, payload), 0);
}

TEST(RecordCodecTest, StandardFrameDecodesWithStockZstd) {
  const std::string content = TrainDictionaryForTest(SyntheticLogLines(2000, 6), 8192,
                                                     40100);
  auto encoder = EncoderDictionary::Create(content, 3);
  ASSERT_TRUE(encoder.ok());
  auto ddict = DecoderDictionary::Create(content);
  ASSERT_TRUE(ddict.ok());
  EncodeOptions options;
  options.dictionary = encoder->get();
  options.category_index = 5;  // Not part of the frame.
  for (const std::string& payload : {SyntheticLogLines(1, 7)[0], std::string("x!")}) {
    absl::StatusOr<std::string> frame = StandardFrame(Encode(payload, options));
    ASSERT_TRUE(frame.ok()) << frame.status();
    std::string out(payload.size() + 10, '\0');
    ZSTD_DCtx* dctx = ZSTD_createDCtx();
    const size_t n = ZSTD_decompress_usingDDict(dctx, out.data(), out.size(), frame->data(),
                                                frame->size(), (*ddict)->ddict());
    ZSTD_freeDCtx(dctx);
    ASSERT_FALSE(ZSTD_isError(n)) << ZSTD_getErrorName(n);
    EXPECT_EQ(out.substr(0, n), payload);
  }
}

// Short frames (ADR 0049): a frame whose header rebuilds from its dictionary id and
// content size is stored without that header.
class ShortFrameTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string content = TrainDictionaryForTest(SyntheticLogLines(2000, 21), 8192,
                                                       32800);
    encoder_ = *EncoderDictionary::Create(content, 3);
    lookup_.Add(*DecoderDictionary::Create(content));
  }
  std::string Value(absl::string_view payload, bool short_frame, uint32_t category = 0) {
    EncodeOptions options;
    options.dictionary = encoder_.get();
    options.short_frame = short_frame;
    options.category_index = category;
    return Encode(payload, options);
  }
  std::shared_ptr<const EncoderDictionary> encoder_;
  MapLookup lookup_;
};

TEST_F(ShortFrameTest, RebuildsExactlyTheFrameZstdWroteAndSavesItsHeader) {
  size_t short_bytes = 0, whole_bytes = 0;
  for (const std::string& line : SyntheticLogLines(300, 22)) {
    for (uint32_t category : {0u, 3u}) {
      const std::string short_value = Value(line, true, category);
      const std::string whole_value = Value(line, false, category);
      short_bytes += short_value.size();
      whole_bytes += whole_value.size();
      absl::StatusOr<RecordView> view = ParseRecord(short_value);
      ASSERT_TRUE(view.ok()) << view.status();
      ASSERT_EQ(view->encoding, Encoding::kShortFrame);
      EXPECT_TRUE(view->framed());
      EXPECT_EQ(view->dictionary_id, 32800u);
      EXPECT_EQ(view->content_size, line.size());
      EXPECT_EQ(view->category_index, category);
      // The frame put back is byte for byte the one the whole form stores.
      std::string scratch;
      EXPECT_EQ(*MagiclessFrame(*view, &scratch), ParseRecord(whole_value)->body);
      EXPECT_EQ(*StandardFrame(short_value), *StandardFrame(whole_value));
      absl::StatusOr<DecodedRecord> decoded = DecodeRecord(short_value, lookup_);
      ASSERT_TRUE(decoded.ok()) << decoded.status();
      EXPECT_EQ(decoded->payload, line);
      EXPECT_EQ(decoded->category_index, category);
      // A whole frame handed over (as cluster mode logs it) is stored the same way.
      std::string appended;
      ASSERT_TRUE(
          AppendFrameValue(ParseRecord(whole_value)->body, category, &appended).ok());
      EXPECT_EQ(appended, short_value);
    }
  }
  // Descriptor, 2-byte id, size and the 3-byte block header (7-8 bytes) become a
  // 1-byte id and a 1-2 byte size (a server's first 128 ids take one byte).
  EXPECT_LE(short_bytes + 4 * 600, whole_bytes);
}

TEST_F(ShortFrameTest, FramesWhoseHeaderSaysMoreStayWhole) {
  std::string large;  // Several blocks.
  for (int i = 0; large.size() < (300 << 10); ++i) large += SyntheticLogLines(1, i)[0];
  EncodeOptions checked;
  checked.checksum = true;
  checked.dictionary = encoder_.get();
  for (const std::string& value :
       {Value(large, true), Encode(SyntheticLogLines(1, 23)[0], checked)}) {
    absl::StatusOr<RecordView> view = ParseRecord(value);
    ASSERT_TRUE(view.ok()) << view.status();
    EXPECT_EQ(view->encoding, Encoding::kZstdFrame);
    ASSERT_TRUE(DecodeRecord(value, lookup_).ok());
  }
  // Without a dictionary a short frame says so with id 0.
  const std::string line = SyntheticLogLines(1, 24)[0] + SyntheticLogLines(1, 25)[0];
  const std::string no_dictionary = Encode(line);
  absl::StatusOr<RecordView> view = ParseRecord(no_dictionary);
  ASSERT_TRUE(view.ok());
  EXPECT_EQ(view->encoding, Encoding::kShortFrame);
  EXPECT_EQ(view->dictionary_id, 0u);
  MapLookup none;
  EXPECT_EQ(DecodeRecord(no_dictionary, none)->payload, line);
}

TEST_F(ShortFrameTest, MalformedShortFramesAreDataLoss) {
  const std::string good = Value(SyntheticLogLines(1, 26)[0], true);
  ASSERT_EQ(good[0], '\x03');
  ASSERT_EQ(good[1], '\x21');  // Dictionary 32800 - 32767, a 1-byte varint.
  const std::string block = good.substr(good.size() - 10);
  const std::string cases[] = {
      "\x03",                                        // no dictionary field
      "\x03\x01",                                    // no size
      "\x03\x01\x20",                                // no block
      "\x03\xff\xff\xff\xff\x0f\x20" + block,            // dictionary id past 2^32
      std::string("\x03\x00\x81\x80\x80\x20", 6) + block,  // size past kMaxRecordBytes
      std::string("\x03\x00\x20", 3) + std::string((128 << 10) + 1, 'b'),  // block too large
  };
  for (const std::string& value : cases) {
    EXPECT_EQ(ParseRecord(value).status().code(), absl::StatusCode::kDataLoss)
        << value.size();
    EXPECT_EQ(DecodeRecord(value, lookup_).status().code(), absl::StatusCode::kDataLoss);
    EXPECT_EQ(StandardFrame(value).status().code(), absl::StatusCode::kDataLoss);
  }
}

TEST_F(ShortFrameTest, EveryChangedHeaderNumberIsDataLossNeverAnotherPayload) {
  const std::string line = SyntheticLogLines(1, 27)[0];
  const std::string good = Value(line, true);
  absl::StatusOr<RecordView> view = ParseRecord(good);
  ASSERT_TRUE(view.ok());
  const size_t header_end = good.size() - view->body.size();  // Flags and two varints.
  for (size_t i = 1; i < header_end; ++i) {
    for (int bit = 0; bit < 7; ++bit) {  // Varint continuation bits kept.
      std::string changed = good;
      changed[i] = static_cast<char>(changed[i] ^ (1 << bit));
      absl::StatusOr<DecodedRecord> decoded = DecodeRecord(changed, lookup_);
      ASSERT_FALSE(decoded.ok()) << "byte " << i << " bit " << bit;
      EXPECT_EQ(decoded.status().code(), absl::StatusCode::kDataLoss);
    }
  }
}

TEST(DictionaryTest, RejectsBytesThatAreNotADictionary) {
  EXPECT_EQ(DecoderDictionary::Create("plain text, no magic").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(EncoderDictionary::Create("plain text", 3).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(DictionaryTest, RejectsReservedIds) {
  const std::string content = TrainDictionaryForTest(SyntheticLogLines(1000, 4), 4096,
                                                     1234);
  absl::StatusOr<uint32_t> id = DictionaryIdOf(content);
  EXPECT_EQ(id.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(DictionaryTest, ReportsIdAndMemory) {
  const std::string content = TrainDictionaryForTest(SyntheticLogLines(1000, 5), 4096,
                                                     32768);
  auto dict = DecoderDictionary::Create(content);
  ASSERT_TRUE(dict.ok());
  EXPECT_EQ((*dict)->id(), 32768u);
  EXPECT_GT((*dict)->memory_bytes(), content.size());
  // The bytes live in the arena block, after the tables, and read back unchanged.
  EXPECT_EQ((*dict)->content(), content);
  const char* block = reinterpret_cast<const char*>((*dict)->ddict());
  EXPECT_EQ((*dict)->content().data(), block + (*dict)->ddict_bytes());
}

TEST(DictionaryTest, ArenaBlocksComeBackWhenDictionariesGo) {
  const std::string content = TrainDictionaryForTest(SyntheticLogLines(1000, 6), 4096,
                                                     32769);
  const size_t before = DictionaryArena::Global().stats().used_bytes;
  {
    auto a = DecoderDictionary::Create(content);
    auto b = DecoderDictionary::Create(content);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(DictionaryArena::Global().stats().used_bytes,
              before + (*a)->memory_bytes() + (*b)->memory_bytes());
  }
  EXPECT_EQ(DictionaryArena::Global().stats().used_bytes, before);
}

}  // namespace
}  // namespace dictlog::codec
