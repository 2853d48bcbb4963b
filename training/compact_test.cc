#include "training/compact.h"

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>

#include "codec/dictionary_format.h"
#include "training/files.h"
#include "training/trainer.h"
#include "gtest/gtest.h"
#include "codec/dictionary.h"
#include "codec/record_codec.h"
#include "codec/test_dictionary.h"

namespace dictlog::trainer {
namespace {

// The loghub samples, one vector of lines per file (from the test's runfiles); none
// if they cannot be read.
std::vector<std::vector<std::string>> LoghubFiles() {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const std::string dir = std::string(srcdir == nullptr ? ".." : srcdir) + "/loghub";
  absl::StatusOr<std::vector<LogFile>> logs = ReadLogFiles(dir);
  std::vector<std::vector<std::string>> files;
  if (!logs.ok()) return files;
  for (LogFile& log : *logs) files.push_back(std::move(log.lines));
  return files;
}

int Cells(const FseTable& t) {
  int cells = 0;
  for (int16_t c : t.counts) cells += std::abs(c);
  return cells;
}

TEST(RenormalizeTest, FillsTheSmallerTableAndKeepsTheOrderOfProbabilities) {
  FseTable table{9, {200, -1, 150, 1, 100, 0, 0, 50, -1, 11}};
  table.counts.push_back(static_cast<int16_t>(512 - 200 - 1 - 150 - 1 - 100 - 50 - 1 - 11));
  const FseTable small = Renormalize(table, 6);
  EXPECT_EQ(small.accuracy_log, 6);
  EXPECT_EQ(Cells(small), 64);
  EXPECT_GT(small.counts[0], small.counts[2]);
  EXPECT_GT(small.counts[2], small.counts[4]);
  EXPECT_GT(small.counts[4], small.counts[7]);
  EXPECT_GE(small.counts[9], 1);  // Seen in the samples: keeps a cell.
  EXPECT_EQ(small.counts[1], 0);  // The trainer's floor for unseen symbols: dropped.
  EXPECT_EQ(small.counts[3], 0);
}

TEST(RenormalizeTest, KeepsTwoSymbolsEvenWhenAllAreRare) {
  const FseTable small = Renormalize({8, {-1, 254, -1}}, 5);
  EXPECT_EQ(Cells(small), 32);
  int nonzero = 0;
  for (int16_t c : small.counts) nonzero += c != 0;
  EXPECT_EQ(nonzero, 2);
}

TEST(RenormalizeTest, ATableAlreadySmallIsUnchanged) {
  const FseTable table{5, {16, 8, 8}};
  EXPECT_EQ(Renormalize(table, 6).counts, table.counts);
}

TEST(CompactTest, RejectsBadOptionsAndNonDictionaries) {
  const std::string dict =
      codec::TrainDictionaryForTest(codec::SyntheticLogLines(2000, 3), 8 << 10, 40002);
  EXPECT_TRUE(absl::IsInvalidArgument(MakeCompact(dict, {4}).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(MakeCompact(dict, {9}).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(MakeCompact("not a dictionary", {6}).status()));
}

// Literals_Block_Type of the first block of a stored record's frame (RFC 8878 3.1.1.3.1:
// 0 raw, 1 RLE, 2 Huffman with a tree in the frame, 3 Huffman with the dictionary's
// tree), or -1 for a record stored raw.
int FirstLiteralsType(const std::string& stored) {
  auto view = codec::ParseRecord(stored);
  if (!view.ok() || !view->framed()) return -1;
  std::string scratch;
  const absl::string_view frame = *codec::MagiclessFrame(*view, &scratch);
  ZSTD_frameHeader header;
  if (ZSTD_getFrameHeader_advanced(&header, frame.data(), frame.size(),
                                   ZSTD_f_zstd1_magicless) != 0) {
    return -2;
  }
  const size_t block_at = header.headerSize;
  const uint8_t block_type = (static_cast<uint8_t>(frame[block_at]) >> 1) & 3;
  if (block_type != 2) return -3;  // Not a compressed block: no literals section.
  return static_cast<uint8_t>(frame[block_at + 3]) & 3;
}

TEST(CompactTest, CompactFramesKeepLiteralsRawAndFullFramesUseTheDictionaryTree) {
  const auto lines = codec::SyntheticLogLines(3000, 11);
  const std::vector<std::string> train(lines.begin(), lines.begin() + 2000);
  absl::StatusOr<std::string> full = TrainDictionary(train, {8 << 10, 40003, 3});
  ASSERT_TRUE(full.ok()) << full.status();
  absl::StatusOr<std::string> compact = MakeCompact(*full, {});
  ASSERT_TRUE(compact.ok());
  auto full_encoder = *codec::EncoderDictionary::Create(*full, 3);
  auto compact_encoder = *codec::EncoderDictionary::Create(*compact, 3);
  EXPECT_FALSE(full_encoder->compact());
  EXPECT_TRUE(compact_encoder->compact());
  EXPECT_TRUE((*codec::DecoderDictionary::Create(*compact))->compact());
  int full_tree = 0, compact_huffman = 0, compact_frames = 0;
  for (size_t i = 2000; i < lines.size(); ++i) {
    std::string a, b;
    codec::EncodeOptions options;
    options.dictionary = full_encoder.get();
    ASSERT_TRUE(codec::EncodeRecord(lines[i], options, &a).ok());
    options.dictionary = compact_encoder.get();
    ASSERT_TRUE(codec::EncodeRecord(lines[i], options, &b).ok());
    full_tree += FirstLiteralsType(a) == 3;
    const int type = FirstLiteralsType(b);
    compact_frames += type >= 0;
    compact_huffman += type == 2 || type == 3;
  }
  EXPECT_GT(full_tree, 100);  // Full dictionaries do use their Huffman tree...
  EXPECT_GT(compact_frames, 900);
  EXPECT_EQ(compact_huffman, 0);  // ...compact ones never.
}

// The property the issue asks for: a compact dictionary is a standard one (stock
// libzstd loads it and decodes our frames), and every loghub record round-trips
// byte-identical through dictlog's codec with it, at each accuracy log.
TEST(CompactTest, EveryLoghubRecordRoundTripsThroughStockZstd) {
  const auto files = LoghubFiles();
  ASSERT_EQ(files.size(), 10u);
  std::unique_ptr<ZSTD_DCtx, size_t (*)(ZSTD_DCtx*)> dctx(ZSTD_createDCtx(), ZSTD_freeDCtx);
  for (size_t f = 0; f < files.size(); ++f) {
    const auto& lines = files[f];
    const std::vector<std::string> train(lines.begin(), lines.begin() + lines.size() / 2);
    const uint32_t id = 50000 + static_cast<uint32_t>(f);
    absl::StatusOr<std::string> full = TrainDictionary(train, {16 << 10, id, 3});
    ASSERT_TRUE(full.ok()) << full.status();
    for (int log : {5, 6, 8}) {
      absl::StatusOr<std::string> compact = MakeCompact(*full, {log});
      ASSERT_TRUE(compact.ok()) << compact.status();
      absl::StatusOr<codec::DictionaryParts> parts = codec::ParseDictionary(*compact);
      ASSERT_TRUE(parts.ok()) << parts.status();
      EXPECT_EQ(parts->id, id);
      EXPECT_LE(parts->literal_lengths.accuracy_log, log);
      EXPECT_LE(parts->match_lengths.accuracy_log, log);
      EXPECT_LE(parts->offsets.accuracy_log, log);
      auto encoder = codec::EncoderDictionary::Create(*compact, 3);
      ASSERT_TRUE(encoder.ok()) << encoder.status();
      auto decoder = codec::DecoderDictionary::Create(*compact);
      ASSERT_TRUE(decoder.ok()) << decoder.status();
      codec::MapDictionaryLookup lookup;
      lookup.Add(*decoder);
      codec::EncodeOptions options;
      options.dictionary = encoder->get();
      std::string out;
      for (const std::string& line : lines) {
        std::string stored;
        ASSERT_TRUE(codec::EncodeRecord(line, options, &stored).ok());
        auto decoded = codec::DecodeRecord(stored, lookup);
        ASSERT_TRUE(decoded.ok()) << decoded.status();
        ASSERT_EQ(decoded->payload, line);
        // Stock zstd, one-shot, with the dictionary bytes: the `zstd -D` path.
        auto frame = codec::StandardFrame(stored);
        ASSERT_TRUE(frame.ok());
        out.resize(line.size() + 1);
        const size_t n = ZSTD_decompress_usingDict(dctx.get(), out.data(), out.size(),
                                                   frame->data(), frame->size(),
                                                   compact->data(), compact->size());
        ASSERT_FALSE(ZSTD_isError(n)) << ZSTD_getErrorName(n);
        ASSERT_EQ(out.substr(0, n), line);
      }
    }
  }
}

}  // namespace
}  // namespace dictlog::trainer
