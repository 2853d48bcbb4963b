#include "server/dictionary/dictionary_set.h"

#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "server/codec/test_dictionary.h"

namespace dictlog::dictionary {
namespace {

std::shared_ptr<const codec::DecoderDictionary> Dict(uint32_t id, uint32_t seed) {
  auto dict = codec::DecoderDictionary::Create(codec::TrainDictionaryForTest(
      codec::SyntheticLogLines(1000, seed), 4096, id));
  EXPECT_TRUE(dict.ok()) << dict.status();
  return *dict;
}

TEST(DictionarySetTest, FindsAddedDictionariesById) {
  DictionarySet set;
  auto a = Dict(40000, 1);
  auto b = Dict(40001, 2);
  ASSERT_TRUE(set.Add(a).ok());
  ASSERT_TRUE(set.Add(b).ok());
  EXPECT_EQ(set.Find(40000), a);
  EXPECT_EQ(set.Find(40001), b);
  EXPECT_EQ(set.Find(40002), nullptr);
  EXPECT_EQ(set.size(), 2u);
  set.Remove(40000);
  EXPECT_EQ(set.Find(40000), nullptr);
  EXPECT_EQ(set.Find(40001), b);
}

TEST(DictionarySetTest, SameIdWithOtherBytesIsRejected) {
  DictionarySet set;
  ASSERT_TRUE(set.Add(Dict(40000, 1)).ok());
  EXPECT_TRUE(set.Add(Dict(40000, 1)).ok());  // Same bytes: no-op.
  EXPECT_EQ(set.Add(Dict(40000, 7)).code(), absl::StatusCode::kAlreadyExists);
}

TEST(DictionarySetTest, ConcurrentAddsAndFindsLoseNothing) {
  DictionarySet set;
  std::vector<std::shared_ptr<const codec::DecoderDictionary>> dicts;
  for (uint32_t i = 0; i < 4; ++i) dicts.push_back(Dict(41000 + i, 10 + i));
  std::vector<std::thread> threads;
  for (uint32_t i = 0; i < 4; ++i) {
    threads.emplace_back([&, i] {
      ASSERT_TRUE(set.Add(dicts[i]).ok());
      for (int n = 0; n < 10000; ++n) ASSERT_EQ(set.Find(41000 + i), dicts[i]);
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(set.size(), 4u);
}

}  // namespace
}  // namespace dictlog::dictionary
