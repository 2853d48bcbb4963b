// Content-derived dictionary ids and their collision handling (dictionary_ids.h).
#include "server/cluster/dictionary_ids.h"

#include <map>
#include <string>

#include "gtest/gtest.h"

namespace dictlog::cluster {
namespace {

constexpr int32_t kPartitions = 8;

// A zstd dictionary header (magic, id) and a body.
std::string Dictionary(uint32_t id, const std::string& body) {
  std::string content = "\x37\xA4\x30\xEC" + std::string(4, '\0') + body;
  return *StampDictionaryId(content, id);
}

// What a node holds: id -> content (its id bytes included).
struct Held {
  std::map<uint32_t, std::string> by_id;
  IdHolderFn For(const std::string& content) {
    return [this, content](uint32_t id) -> absl::StatusOr<IdHolder> {
      auto it = by_id.find(id);
      if (it == by_id.end()) return IdHolder::kFree;
      return *StampDictionaryId(it->second, 0) == *StampDictionaryId(content, 0)
                 ? IdHolder::kSame
                 : IdHolder::kDifferent;
    };
  }
};

TEST(DictionaryIdsTest, TheIdComesFromTheContentNotItsHeader) {
  const uint32_t id = ContentDictionaryId(Dictionary(40000, "abc"), 3, kPartitions);
  EXPECT_EQ(ContentDictionaryId(Dictionary(12345, "abc"), 3, kPartitions), id);
  EXPECT_TRUE(InPartitionClass(id, 3, kPartitions));
  EXPECT_FALSE(InPartitionClass(id, 4, kPartitions));
  EXPECT_GE(id, 32768u);
  EXPECT_LE(id, kMaxClusterDictionaryId);
  // Another content, almost surely another id (these two are not a collision).
  EXPECT_NE(ContentDictionaryId(Dictionary(40000, "abd"), 3, kPartitions), id);
}

TEST(DictionaryIdsTest, ClassesSplitTheTwoByteRangeByPartition) {
  for (int32_t p = 0; p < kPartitions; ++p) {
    for (const char* body : {"x", "y", "zz", "a longer body"}) {
      const uint32_t id = ContentDictionaryId(Dictionary(1, body), p, kPartitions);
      for (int32_t q = 0; q < kPartitions; ++q) {
        EXPECT_EQ(InPartitionClass(id, q, kPartitions), p == q) << id;
      }
    }
  }
  EXPECT_FALSE(InPartitionClass(32767, 0, kPartitions));
  EXPECT_FALSE(InPartitionClass(65536, 0, kPartitions));
  EXPECT_TRUE(InPartitionClass(65535, 7, kPartitions));
  EXPECT_TRUE(InPartitionClass(40000, 0, 1));
  // Past kMaxPartitionsWithIds partitions there are no classes (dictlogd refuses them).
  EXPECT_EQ(ContentDictionaryId(Dictionary(1, "x"), 3, 40000), 0u);
  EXPECT_FALSE(InPartitionClass(32768 + 3, 3, 40000));
}

TEST(DictionaryIdsTest, StampReplacesOnlyTheIdBytesAndRefusesNonDictionaries) {
  const std::string content = Dictionary(32768, "body");
  absl::StatusOr<std::string> stamped = StampDictionaryId(content, 0x01020304);
  ASSERT_TRUE(stamped.ok());
  EXPECT_EQ(stamped->substr(4, 4), std::string("\x04\x03\x02\x01", 4));
  EXPECT_EQ(stamped->substr(0, 4), content.substr(0, 4));
  EXPECT_EQ(stamped->substr(8), "body");
  EXPECT_EQ(StampDictionaryId("short", 1).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(StampDictionaryId("not a dictionary at all", 1).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(DictionaryIdsTest, FreeIdIsTakenAndTheSameDictionaryAgainFindsItself) {
  Held held;
  const std::string content = Dictionary(1, "first");
  const uint32_t proposed = ContentDictionaryId(content, 2, kPartitions);
  bool existing = true;
  absl::StatusOr<uint32_t> id =
      ResolveDictionaryId(proposed, 2, kPartitions, held.For(content), &existing);
  ASSERT_TRUE(id.ok()) << id.status();
  EXPECT_EQ(*id, proposed);
  EXPECT_FALSE(existing);
  held.by_id[*id] = *StampDictionaryId(content, *id);
  // A replay, or a second trainer that made the same dictionary: the same id.
  id = ResolveDictionaryId(proposed, 2, kPartitions, held.For(Dictionary(99, "first")),
                           &existing);
  ASSERT_TRUE(id.ok());
  EXPECT_EQ(*id, proposed);
  EXPECT_TRUE(existing);
}

TEST(DictionaryIdsTest, CollisionTakesTheNextFreeIdOfTheClassInLogOrder) {
  Held held;
  const uint32_t proposed = 32768 + 4095 * kPartitions + 5;  // The last of its class.
  held.by_id[proposed] = Dictionary(proposed, "already in the log");
  const uint32_t wrapped = 32768 + 5;
  held.by_id[wrapped] = Dictionary(wrapped, "also in the log");
  bool existing = true;
  const std::string newcomer = Dictionary(proposed, "a different dictionary");
  absl::StatusOr<uint32_t> id =
      ResolveDictionaryId(proposed, 5, kPartitions, held.For(newcomer), &existing);
  ASSERT_TRUE(id.ok()) << id.status();
  EXPECT_EQ(*id, wrapped + kPartitions);  // past both taken ids, in the same class
  EXPECT_FALSE(existing);
  EXPECT_TRUE(InPartitionClass(*id, 5, kPartitions));
  // Every node holding the same earlier dictionaries decides the same.
  Held other = held;
  EXPECT_EQ(*ResolveDictionaryId(proposed, 5, kPartitions, other.For(newcomer), &existing),
            *id);
}

TEST(DictionaryIdsTest, ProposalsOutsideTheClassAndFullClassesAreRefused) {
  Held held;
  bool existing = false;
  EXPECT_EQ(ResolveDictionaryId(32768 + 1, 0, kPartitions, held.For("x"), &existing)
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ResolveDictionaryId(7, 0, kPartitions, held.For("x"), &existing).status().code(),
            absl::StatusCode::kInvalidArgument);
  IdHolderFn full = [](uint32_t) -> absl::StatusOr<IdHolder> {
    return IdHolder::kDifferent;
  };
  EXPECT_EQ(ResolveDictionaryId(32768, 0, kPartitions, full, &existing).status().code(),
            absl::StatusCode::kResourceExhausted);
  IdHolderFn failing = [](uint32_t) -> absl::StatusOr<IdHolder> {
    return absl::UnavailableError("store");
  };
  EXPECT_EQ(ResolveDictionaryId(32768, 0, kPartitions, failing, &existing).status().code(),
            absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace dictlog::cluster
