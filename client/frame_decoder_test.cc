// DdictCache (LRU by bytes, hits and misses, an id's entry replaced by a dictionary
// with another content check) and DecodeFrame (round trip with and
// without a dictionary; DATA_LOSS for a corrupt, truncated, mismatched or oversized
// frame, without allocating what a frame declares).
#include "client/frame_decoder.h"

#include <zdict.h>
#include <zstd.h>

#include "absl/strings/str_cat.h"
#include "codec/dictionary_check.h"
#include "gtest/gtest.h"

namespace dictlog::client {
namespace {

std::vector<std::string> Lines(int n, int seed) {
  std::vector<std::string> lines;
  for (int i = 0; i < n; ++i) {
    lines.push_back(absl::StrCat("2026-11-24 18:", i % 60, ":", (i * 7 + seed) % 60,
                                 " INFO dfs.DataNode: Receiving block blk_", i * 7919 + seed,
                                 " src: /10.251.", i % 255, ".", seed, ":50010"));
  }
  return lines;
}

// A zstd dictionary with id `id` trained on Lines(2000, seed).
std::string Dictionary(uint32_t id, int seed) {
  std::string samples;
  std::vector<size_t> sizes;
  for (const std::string& line : Lines(2000, seed)) {
    samples += line;
    sizes.push_back(line.size());
  }
  std::string dict(8192, '\0');
  size_t n = ZDICT_trainFromBuffer(dict.data(), dict.size(), samples.data(), sizes.data(),
                                   static_cast<unsigned>(sizes.size()));
  EXPECT_FALSE(ZDICT_isError(n)) << ZDICT_getErrorName(n);
  dict.resize(n);
  // ZDICT_trainFromBuffer picks a random id: set ours (bytes 4..7, little-endian).
  for (int i = 0; i < 4; ++i) dict[4 + i] = static_cast<char>((id >> (8 * i)) & 0xff);
  return dict;
}

std::string Compress(const std::string& payload, const std::string& dict) {
  std::string frame(ZSTD_compressBound(payload.size()), '\0');
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  size_t n = ZSTD_compress_usingDict(cctx, frame.data(), frame.size(), payload.data(),
                                     payload.size(), dict.data(), dict.size(), 3);
  ZSTD_freeCCtx(cctx);
  EXPECT_FALSE(ZSTD_isError(n));
  frame.resize(n);
  return frame;
}

TEST(FrameDecoderTest, DecodesWithAndWithoutADictionary) {
  const std::string dict = Dictionary(40000, 1);
  DdictCache cache(1 << 20);
  auto ddict = cache.Insert(40000, dict);
  ASSERT_TRUE(ddict.ok()) << ddict.status();
  for (const std::string& line : Lines(50, 3)) {
    auto decoded = DecodeFrame(Compress(line, dict), ddict->get());
    ASSERT_TRUE(decoded.ok()) << decoded.status();
    EXPECT_EQ(*decoded, line);
    auto plain = DecodeFrame(Compress(line, ""), nullptr);
    ASSERT_TRUE(plain.ok());
    EXPECT_EQ(*plain, line);
  }
}

TEST(FrameDecoderTest, BadFramesAreDataLoss) {
  const std::string dict = Dictionary(40001, 1);
  DdictCache cache(1 << 20);
  auto ddict = cache.Insert(40001, dict);
  ASSERT_TRUE(ddict.ok());
  const std::string frame = Compress(Lines(1, 5)[0], dict);
  std::string corrupt = frame;
  corrupt[corrupt.size() - 3] ^= 0x55;
  const std::vector<std::string> bad = {"", "not a frame", frame.substr(0, frame.size() - 4),
                                        corrupt};
  for (const std::string& b : bad) {
    EXPECT_EQ(DecodeFrame(b, ddict->get()).status().code(), absl::StatusCode::kDataLoss);
  }
  // The frame needs its dictionary; another one or none does not decode it.
  auto other = cache.Insert(40002, Dictionary(40002, 9));
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(DecodeFrame(frame, other->get()).status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(DecodeFrame(frame, nullptr).status().code(), absl::StatusCode::kDataLoss);
}

TEST(FrameDecoderTest, AFrameDeclaringHugeContentIsRefusedBeforeAllocating) {
  // A frame header declaring 2^40 bytes (single segment off, 8-byte content size).
  std::string frame = "\x28\xb5\x2f\xfd";
  frame += static_cast<char>(0xC0);  // FCS 8 bytes, no checksum, no dict id.
  frame += static_cast<char>(0x00);  // Window descriptor.
  const uint64_t size = uint64_t{1} << 40;
  for (int i = 0; i < 8; ++i) frame += static_cast<char>((size >> (8 * i)) & 0xff);
  frame += std::string("\x01\x00\x00", 3);  // A last raw block of size 0.
  auto decoded = DecodeFrame(frame, nullptr);
  EXPECT_EQ(decoded.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(decoded.status().message().find("oversized"), std::string::npos);
}

TEST(FrameDecoderTest, CacheEvictsLeastRecentlyUsedPastItsBudget) {
  const std::string a = Dictionary(50001, 1), b = Dictionary(50002, 2),
                    c = Dictionary(50003, 3);
  auto one = Ddict::Create(a);
  ASSERT_TRUE(one.ok());
  // Room for two DDicts, not three.
  DdictCache cache((*one)->memory_bytes() * 5 / 2);
  ASSERT_TRUE(cache.Insert(50001, a).ok());
  ASSERT_TRUE(cache.Insert(50002, b).ok());
  EXPECT_NE(cache.Find(50001, 0), nullptr);  // 50001 is now the most recently used.
  ASSERT_TRUE(cache.Insert(50003, c).ok());
  EXPECT_EQ(cache.Find(50002, 0), nullptr);
  EXPECT_NE(cache.Find(50001, 0), nullptr);
  EXPECT_NE(cache.Find(50003, 0), nullptr);
  const DdictCacheStats stats = cache.stats();
  EXPECT_EQ(stats.entries, 2u);
  EXPECT_EQ(stats.evictions, 1u);
  EXPECT_EQ(stats.hits, 3u);
  EXPECT_EQ(stats.misses, 1u);
  EXPECT_LE(stats.bytes, (*one)->memory_bytes() * 5 / 2);
}

TEST(FrameDecoderTest, ADictionaryUnderACachedIdWithAnotherCheckReplacesIt) {
  // A restored store gives id 60001 again, to a dictionary trained on other data.
  const std::string before = Dictionary(60001, 1), after = Dictionary(60001, 7);
  ASSERT_NE(codec::DictionaryCheck(before), codec::DictionaryCheck(after));
  DdictCache cache(1 << 20);
  auto old_ddict = cache.Insert(60001, before);
  ASSERT_TRUE(old_ddict.ok());
  EXPECT_EQ((*old_ddict)->check(), codec::DictionaryCheck(before));
  // Found by id alone (a server from before checks) and with its own check; a frame
  // naming the id with the other check misses.
  EXPECT_EQ(cache.Find(60001, 0), *old_ddict);
  EXPECT_EQ(cache.Find(60001, codec::DictionaryCheck(before)), *old_ddict);
  EXPECT_EQ(cache.Find(60001, codec::DictionaryCheck(after)), nullptr);
  // The dictionary fetched again replaces the cached one, and decodes its frames.
  auto new_ddict = cache.Insert(60001, after);
  ASSERT_TRUE(new_ddict.ok());
  EXPECT_NE(*new_ddict, *old_ddict);
  EXPECT_EQ(cache.Find(60001, codec::DictionaryCheck(after)), *new_ddict);
  EXPECT_EQ(cache.Find(60001, codec::DictionaryCheck(before)), nullptr);
  const std::string line = Lines(1, 11)[0];
  auto decoded = DecodeFrame(Compress(line, after), new_ddict->get());
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(*decoded, line);
  const DdictCacheStats stats = cache.stats();
  EXPECT_EQ(stats.entries, 1u);
  EXPECT_EQ(stats.replaced, 1u);
  EXPECT_EQ(stats.bytes, (*new_ddict)->memory_bytes());
  // Inserting the same content again keeps the one cached.
  auto again = cache.Insert(60001, after);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *new_ddict);
  EXPECT_EQ(cache.stats().replaced, 1u);
}

TEST(FrameDecoderTest, NotADictionaryIsRefused) {
  DdictCache cache(1 << 20);
  EXPECT_EQ(cache.Insert(1, "hello").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(cache.stats().entries, 0u);
}

}  // namespace
}  // namespace dictlog::client
