#include "server/pool/pool_registry.h"

#include <thread>

#include "common/test_dir.h"
#include "training/compact.h"
#include "gtest/gtest.h"
#include "codec/test_dictionary.h"
#include "server/pool/pool_options.h"

namespace dictlog::pool {
namespace {

class PoolRegistryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = FreshTestDir();
    Reopen();
  }

  void Reopen(uint64_t skip = 0) {
    registry_.reset();
    store_.reset();
    auto store = store::Store::Open({path_, false});
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = std::move(*store);
    auto registry = PoolRegistry::Load(store_.get(), BuiltinPoolOptions(), skip);
    ASSERT_TRUE(registry.ok()) << registry.status();
    registry_ = std::move(*registry);
  }

  std::string path_;
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<PoolRegistry> registry_;
};

TEST_F(PoolRegistryTest, GetOrCreateUsesDefaultsAndPersists) {
  auto pool = registry_->GetOrCreate("HDFS");
  ASSERT_TRUE(pool.ok()) << pool.status();
  EXPECT_EQ((*pool)->id(), 1u);
  EXPECT_EQ((*pool)->options().compression_level(), 3);
  EXPECT_EQ(registry_->GetOrCreate("HDFS")->get(), pool->get());
  Reopen();
  ASSERT_NE(registry_->Find("HDFS"), nullptr);
  EXPECT_EQ(registry_->Find("HDFS")->id(), 1u);
  EXPECT_EQ(registry_->FindById(1)->name(), "HDFS");
}

// After a write-ahead log lost writes (ADR 0044): loaded with a skip, every pool starts
// `skip` past its next seq, and a pool created after it at the raised seq floor.
TEST_F(PoolRegistryTest, LoadWithASkipStartsEveryPoolPastIt) {
  absl::StatusOr<std::shared_ptr<Pool>> web = registry_->GetOrCreate("web");
  ASSERT_TRUE(web.ok()) << web.status();
  EXPECT_EQ((*web)->ReserveSeqs(3), 1u);
  // Its lease as a clean close leaves it: the next seq.
  ASSERT_TRUE(store_->PutSeqCeilings({{(*web)->id(), (*web)->next_seq()}}).ok());
  Reopen(1000);
  EXPECT_EQ(registry_->Find("web")->next_seq(), 1004u);
  EXPECT_EQ((*registry_->GetOrCreate("fresh"))->next_seq(), 1001u);
  Reopen(1000);
  EXPECT_EQ(registry_->Find("fresh")->next_seq(), 2001u);
  EXPECT_EQ((*registry_->GetOrCreate("later"))->next_seq(), 2001u);  // Floors add up.
  Reopen();
  EXPECT_EQ(registry_->Find("later")->next_seq(), 2001u);  // Its first seq is stored.
  EXPECT_EQ(registry_->Find("web")->next_seq(), 2004u);    // Its lease is stored.
}

TEST_F(PoolRegistryTest, CreateRejectsDuplicatesAndBadInputWithoutWriting) {
  v1::PoolOptions options;
  options.set_compression_level(7);
  ASSERT_TRUE(registry_->Create("web", options).ok());
  EXPECT_EQ(registry_->Create("web", options).status().code(),
            absl::StatusCode::kAlreadyExists);
  options.set_compression_level(0);
  EXPECT_EQ(registry_->Create("other", options).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(registry_->Create("bad name", {}).status().code(),
            absl::StatusCode::kInvalidArgument);
  Reopen();
  ASSERT_EQ(registry_->List().size(), 1u);
  EXPECT_EQ(registry_->Find("web")->options().compression_level(), 7);
}

TEST_F(PoolRegistryTest, UpdateChangesSetFieldsAndPersists) {
  ASSERT_TRUE(registry_->GetOrCreate("p").ok());
  v1::PoolOptions update;
  update.set_dictionary_bytes(4096);
  ASSERT_TRUE(registry_->Update("p", update).ok());
  EXPECT_EQ(registry_->Update("missing", update).status().code(),
            absl::StatusCode::kNotFound);
  Reopen();
  EXPECT_EQ(registry_->Find("p")->options().dictionary_bytes(), 4096u);
  EXPECT_EQ(registry_->Find("p")->options().compression_level(), 3);
}

TEST_F(PoolRegistryTest, CategoryIndexesPersistAndSeqsContinueAfterReopen) {
  auto pool = *registry_->GetOrCreate("apps");
  EXPECT_EQ(*pool->CategoryIndex("apps", *store_), 0u);
  EXPECT_EQ(*pool->CategoryIndex("app-a", *store_), 1u);
  EXPECT_EQ(*pool->CategoryIndex("app-b", *store_), 2u);
  EXPECT_EQ(*pool->CategoryIndex("app-a", *store_), 1u);
  const uint64_t first = pool->AllocateSeqs(3);
  EXPECT_EQ(first, 1u);
  ASSERT_TRUE(store_->WriteRecords({{pool->id(), 3, 1, "x"}}).ok());
  Reopen();
  pool = registry_->Find("apps");
  EXPECT_EQ(*pool->CategoryName(2), "app-b");
  EXPECT_EQ(*pool->CategoryName(0), "apps");
  EXPECT_EQ(pool->CategoryName(9).status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(pool->AllocateSeqs(1), 4u);
}

TEST_F(PoolRegistryTest, ActiveDictionaryPersistsAndEncoderFollowsTheLevel) {
  auto pool = *registry_->GetOrCreate("d");
  EXPECT_EQ(*pool->Encoder(), nullptr);
  auto dict = codec::DecoderDictionary::Create(codec::TrainDictionaryForTest(
      codec::SyntheticLogLines(1000, 1), 4096, 33000));
  ASSERT_TRUE(dict.ok());
  ASSERT_TRUE(registry_->SetActiveDictionaryId("d", 33000).ok());
  pool->SetActiveDictionary(*dict);
  auto encoder = pool->Encoder();
  ASSERT_TRUE(encoder.ok() && *encoder != nullptr);
  EXPECT_EQ((*encoder)->id(), 33000u);
  EXPECT_EQ((*encoder)->compression_level(), 3);
  v1::PoolOptions update;
  update.set_compression_level(-2);
  ASSERT_TRUE(registry_->Update("d", update).ok());
  EXPECT_EQ((*pool->Encoder())->compression_level(), -2);
  EXPECT_EQ(registry_->SetActiveDictionaryId("nope", 1).status().code(),
            absl::StatusCode::kNotFound);
  Reopen();
  EXPECT_EQ(registry_->Find("d")->record().active_dictionary_id(), 33000u);
}

TEST_F(PoolRegistryTest, CompactDictionaryEncodesAtTheCompactLevel) {
  auto pool = *registry_->GetOrCreate("c");
  absl::StatusOr<std::string> compact = trainer::MakeCompact(
      codec::TrainDictionaryForTest(codec::SyntheticLogLines(1000, 1), 4096, 33001), {});
  ASSERT_TRUE(compact.ok()) << compact.status();
  auto dict = codec::DecoderDictionary::Create(*compact);
  ASSERT_TRUE(dict.ok() && (*dict)->compact());
  pool->SetActiveDictionary(*dict);
  EXPECT_EQ((*pool->Encoder())->compression_level(), kDefaultCompactCompressionLevel);
  EXPECT_TRUE((*pool->Encoder())->compact());
  v1::PoolOptions update;
  update.set_compact_compression_level(14);
  update.set_compression_level(1);  // Applies to frames without a compact dictionary.
  ASSERT_TRUE(registry_->Update("c", update).ok());
  EXPECT_EQ((*pool->Encoder())->compression_level(), 14);
  EXPECT_EQ(pool->Info().options().compact_compression_level(), 14);
}

TEST_F(PoolRegistryTest, ConcurrentGetOrCreateMakesOnePool) {
  std::vector<std::thread> threads;
  std::vector<Pool*> seen(8);
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&, i] { seen[i] = registry_->GetOrCreate("race")->get(); });
  }
  for (auto& thread : threads) thread.join();
  for (Pool* pool : seen) EXPECT_EQ(pool, seen[0]);
  EXPECT_EQ(registry_->List().size(), 1u);
}

}  // namespace
}  // namespace dictlog::pool
