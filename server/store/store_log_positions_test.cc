// Store's log positions (cluster mode): written with the records of a message, in
// the same batch, and read back after a reopen.
#include <memory>
#include <string>

#include "common/test_dir.h"
#include "gtest/gtest.h"
#include "server/store/store.h"

namespace dictlog::store {
namespace {

std::unique_ptr<Store> Open(const std::string& path) {
  absl::StatusOr<std::unique_ptr<Store>> store = Store::Open({path, false});
  EXPECT_TRUE(store.ok()) << store.status();
  return store.ok() ? *std::move(store) : nullptr;
}

TEST(StoreLogPositionsTest, EmptyStoreHasNone) {
  std::unique_ptr<Store> store = Open(FreshTestDir());
  absl::StatusOr<std::vector<LogPosition>> positions = store->LoadLogPositions();
  ASSERT_TRUE(positions.ok());
  EXPECT_TRUE(positions->empty());
}

TEST(StoreLogPositionsTest, WrittenWithRecordsAndAloneSurviveReopen) {
  const std::string path = FreshTestDir();
  std::unique_ptr<Store> store = Open(path);
  const LogPosition first{3, 41};
  ASSERT_TRUE(store->WriteRecords({{1, 42, 1, "x"}}, nullptr, &first).ok());
  ASSERT_TRUE(store->PutLogPosition({0, 7}).ok());
  const LogPosition later{3, 1LL << 40};
  ASSERT_TRUE(store->WriteRecords({{1, 43, 1, "y"}}, nullptr, &later).ok());
  store.reset();
  store = Open(path);
  absl::StatusOr<std::vector<LogPosition>> positions = store->LoadLogPositions();
  ASSERT_TRUE(positions.ok()) << positions.status();
  ASSERT_EQ(positions->size(), 2u);
  EXPECT_EQ((*positions)[0].partition, 0u);
  EXPECT_EQ((*positions)[0].offset, 7);
  EXPECT_EQ((*positions)[1].partition, 3u);
  EXPECT_EQ((*positions)[1].offset, 1LL << 40);
  EXPECT_EQ(*store->GetRecord({1, 43}), "y");
  // Pools' catalog entries are unaffected by the 'L' keys.
  absl::StatusOr<std::vector<StoredPool>> pools = store->LoadPools();
  ASSERT_TRUE(pools.ok());
  EXPECT_TRUE(pools->empty());
}

TEST(StoreLogPositionsTest, NegativeOffsetIsRefusedAndNothingWritten) {
  std::unique_ptr<Store> store = Open(FreshTestDir());
  const LogPosition bad{1, -1};
  EXPECT_EQ(store->WriteRecords({{1, 1, 1, "x"}}, nullptr, &bad).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::IsNotFound(store->GetRecord({1, 1}).status()));
}

}  // namespace
}  // namespace dictlog::store
