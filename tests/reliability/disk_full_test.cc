// Disk full: the real LogEngine on a FaultInjectionFs whose free space runs out.
// Appends then fail with RESOURCE_EXHAUSTED and leave nothing behind, reads keep
// working, and appends succeed again once space returns (the store resumes RocksDB);
// after a reopen exactly the acknowledged records are there.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/test_dir.h"
#include "gtest/gtest.h"
#include "server/engine/log_engine.h"
#include "server/store/fault_injection_fs.h"

namespace dictlog::engine {
namespace {

using ::absl::StatusCode;

class DiskFullTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    options_.store.path = FreshTestDir();
    options_.store.sync_writes = GetParam();
    options_.store.file_system = fs_;
    options_.auto_train = false;
    v1::PoolOptions block = pool::BuiltinPoolOptions();
    block.set_storage_mode(v1::STORAGE_MODE_BLOCK);
    block.set_block_bytes(1024);
    options_.pools = {{"blocks", block}};
    Reopen();
  }

  void Reopen() {
    engine_.reset();
    auto engine = LogEngine::Open(options_);
    ASSERT_TRUE(engine.ok()) << engine.status();
    engine_ = std::move(*engine);
  }

  // Appends a batch of `n` records to `category`; remembers them if acknowledged.
  absl::Status AppendBatch(const std::string& category, int n) {
    std::vector<std::string> payloads;
    std::vector<AppendInput> inputs;
    for (int i = 0; i < n; ++i) {
      const int k = next_++;  // One value per line (argument order is unspecified).
      payloads.push_back(absl::StrCat("081109 2035", k, " INFO dfs.DataNode: block ", k * 7919,
                                      " received from 10.250.", k % 256));
    }
    for (const std::string& p : payloads) inputs.push_back({category, p});
    absl::StatusOr<std::vector<std::string>> ids = engine_->Append(inputs);
    if (!ids.ok()) return ids.status();
    for (int i = 0; i < n; ++i) acked_[(*ids)[i]] = payloads[i];
    return absl::OkStatus();
  }

  // Every acknowledged record reads back (Get and MultiGet), and Scans of both pools
  // hold exactly the acknowledged records.
  void ExpectExactlyAcknowledged() {
    std::vector<std::string> ids;
    for (const auto& [id, payload] : acked_) {
      ids.push_back(id);
      absl::StatusOr<v1::Record> r = engine_->Get(id);
      ASSERT_TRUE(r.ok()) << id << ": " << r.status();
      EXPECT_EQ(r->payload(), payload) << id;
    }
    auto many = engine_->MultiGet(ids);
    ASSERT_TRUE(many.ok()) << many.status();
    for (size_t i = 0; i < ids.size(); ++i) {
      ASSERT_TRUE((*many)[i].ok()) << ids[i] << ": " << (*many)[i].status();
      EXPECT_EQ((*many)[i]->payload(), acked_[ids[i]]);
    }
    size_t scanned = 0;
    for (const char* pool : {"records", "blocks"}) {
      ScanSpec spec;
      spec.pool = pool;
      absl::Status s = engine_->Scan(spec, [&](std::vector<v1::Record> chunk) {
        for (const v1::Record& r : chunk) {
          ++scanned;
          EXPECT_EQ(acked_.count(r.id()), 1u) << "not acknowledged: " << r.id();
        }
        return absl::OkStatus();
      });
      EXPECT_TRUE(s.ok()) << s;
    }
    EXPECT_EQ(scanned, acked_.size());
    uint64_t counted = 0;
    for (const v1::PoolInfo& info : engine_->ListPools()) counted += info.stats().records();
    EXPECT_EQ(counted, acked_.size());
  }

  std::shared_ptr<store::FaultInjectionFs> fs_ =
      std::make_shared<store::FaultInjectionFs>();
  EngineOptions options_;
  std::unique_ptr<LogEngine> engine_;
  std::map<std::string, std::string> acked_;
  int next_ = 0;
};

TEST_P(DiskFullTest, AppendsFailCleanlyReadsWorkAndWritesResumeWithSpace) {
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(AppendBatch(i % 2 ? "records" : "blocks", 10).ok());
  }
  fs_->SetFreeBytes(700);  // A few small batches fit, then one is cut mid-write.
  absl::Status failed;
  for (int i = 0; i < 100 && failed.ok(); ++i) {
    failed = AppendBatch(i % 2 ? "records" : "blocks", 5);
  }
  EXPECT_EQ(failed.code(), StatusCode::kResourceExhausted) << failed;
  EXPECT_GE(fs_->no_space_errors(), 1u);
  for (int i = 0; i < 3; ++i) {  // Still full: every append fails the same way.
    absl::Status s = AppendBatch("records", 3);
    EXPECT_EQ(s.code(), StatusCode::kResourceExhausted) << s;
  }
  ExpectExactlyAcknowledged();  // Reads keep working while the disk is full.

  fs_->ClearSpaceLimit();
  for (int i = 0; i < 20; ++i) {
    absl::Status s = AppendBatch(i % 2 ? "records" : "blocks", 10);
    ASSERT_TRUE(s.ok()) << "append " << i << " after space returned: " << s;
  }
  ExpectExactlyAcknowledged();
  Reopen();
  ExpectExactlyAcknowledged();
}

INSTANTIATE_TEST_SUITE_P(SyncWrites, DiskFullTest, ::testing::Bool());

}  // namespace
}  // namespace dictlog::engine
