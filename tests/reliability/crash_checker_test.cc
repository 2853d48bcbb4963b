// The crash test's Checker finds each kind of violation: a real dictlogd (port 0, temp
// data dir) is given records that disagree with the model in one way each, and the
// check must count exactly that.
#include "tests/reliability/crash_checker.h"

#include <cstdlib>
#include <filesystem>
#include <memory>

#include "gtest/gtest.h"
#include "tests/e2e/server_process.h"

namespace dictlog::crash {
namespace {

class CheckerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string dir = std::string(std::getenv("TEST_TMPDIR")) + "/checker";
    std::filesystem::remove_all(dir);
    server_ = std::make_unique<testing::ServerProcess>(
        testing::RunfilePath("server/daemon/dictlogd"), dir);
    absl::StatusOr<std::string> address = server_->Start();
    ASSERT_TRUE(address.ok()) << address.status();
    client::ClientOptions options;
    options.server = *address;
    client_ = std::make_unique<client::Client>(options);
  }

  // A batch of `size` records for the model, with the headers the writers use.
  static std::vector<SentRecord> Batch(uint32_t b, uint32_t size,
                                       absl::string_view text = "a log line") {
    std::vector<SentRecord> records;
    for (uint32_t i = 0; i < size; ++i) {
      records.push_back({"HDFS", MakePayload({{0, 0, b}, i, size}, text)});
    }
    return records;
  }

  // Stores `records` in one AppendBatch; returns the ids.
  std::vector<std::string> Store(const std::vector<SentRecord>& records) {
    std::vector<v1::RecordToAppend> request(records.size());
    for (size_t i = 0; i < records.size(); ++i) {
      request[i].set_category(records[i].category);
      request[i].set_payload(records[i].payload);
    }
    absl::StatusOr<std::vector<std::string>> ids = client_->AppendBatch(request);
    EXPECT_TRUE(ids.ok()) << ids.status();
    return ids.ok() ? *ids : std::vector<std::string>();
  }

  // Sends a batch as the writers do: model first, then the server, then the ack.
  void SendAndAck(uint32_t b, uint32_t size) {
    model_.Sent({0, 0, b}, Batch(b, size));
    ASSERT_TRUE(model_.Acked({0, 0, b}, Store(Batch(b, size))).ok());
  }

  CheckReport Check(const AdminAcks& admin = {}) {
    Checker checker(client_.get(), &model_);
    return checker.Run(admin);
  }

  std::unique_ptr<testing::ServerProcess> server_;
  std::unique_ptr<client::Client> client_;
  CrashModel model_;
};

TEST(PayloadTest, HeaderRoundTrips) {
  const PayloadHeader header{{3, 2, 17}, 4, 9};
  const std::string payload = MakePayload(header, "x | y");
  std::optional<PayloadHeader> parsed = ParsePayload(payload);
  ASSERT_TRUE(parsed.has_value());
  EXPECT_TRUE(parsed->key == header.key);
  EXPECT_EQ(parsed->index, 4u);
  EXPECT_EQ(parsed->size, 9u);
  EXPECT_FALSE(ParsePayload("plain log line").has_value());
  EXPECT_FALSE(ParsePayload("crash c=1 w=1 b=1 i=5 n=5 | index beyond size").has_value());
}

TEST_F(CheckerTest, AgreeingStoreHasNoViolation) {
  SendAndAck(0, 1);
  SendAndAck(1, 50);
  const CheckReport report = Check();
  EXPECT_EQ(report.violations(), 0u) << report.examples.front();
  EXPECT_EQ(report.acked_checked, 51u);
  EXPECT_EQ(report.scanned, 51u);
}

TEST_F(CheckerTest, AcknowledgedButAbsentIsLost) {
  SendAndAck(0, 2);
  model_.Sent({0, 0, 1}, Batch(1, 1));
  ASSERT_TRUE(model_.Acked({0, 0, 1}, {"HDFS/999999"}).ok());
  const CheckReport report = Check();
  EXPECT_EQ(report.lost, 1u);
  EXPECT_EQ(report.violations(), 1u);
}

TEST_F(CheckerTest, DifferentBytesAreAltered) {
  model_.Sent({0, 0, 0}, Batch(0, 1, "what was sent"));
  ASSERT_TRUE(model_.Acked({0, 0, 0}, Store(Batch(0, 1, "what is stored"))).ok());
  const CheckReport report = Check();
  EXPECT_EQ(report.altered, 2u);  // Once by MultiGet, once by the Scan.
  EXPECT_EQ(report.violations(), 2u);
}

TEST_F(CheckerTest, InFlightBatchFoundInPartIsPartial) {
  std::vector<SentRecord> batch = Batch(0, 3);
  model_.Sent({0, 0, 0}, batch);
  batch.pop_back();
  Store(batch);
  const CheckReport report = Check();
  EXPECT_EQ(report.partial_batches, 1u);
  EXPECT_EQ(report.violations(), 1u);
}

TEST_F(CheckerTest, InFlightBatchFoundWholeIsRecoveredAndKept) {
  model_.Sent({0, 0, 0}, Batch(0, 3));
  Store(Batch(0, 3));
  const CheckReport first = Check();
  EXPECT_EQ(first.violations(), 0u);
  EXPECT_EQ(first.recovered_batches, 1u);
  const CheckReport second = Check();  // Now acknowledged: read back by id.
  EXPECT_EQ(second.acked_checked, 3u);
  EXPECT_EQ(second.violations(), 0u);
}

TEST_F(CheckerTest, DroppedBatchMustNotComeBack) {
  model_.Sent({0, 0, 0}, Batch(0, 2));
  const CheckReport first = Check();
  EXPECT_EQ(first.dropped_batches, 1u);
  EXPECT_EQ(first.violations(), 0u);
  Store(Batch(0, 2));
  EXPECT_EQ(Check().unknown, 2u);
}

TEST_F(CheckerTest, RecordNeverSentIsUnknown) {
  SendAndAck(0, 1);
  ASSERT_TRUE(client_->Append("HDFS", "a line the test never sent").ok());
  const CheckReport report = Check();
  EXPECT_EQ(report.unknown, 1u);
  EXPECT_EQ(report.violations(), 1u);
}

TEST_F(CheckerTest, RecordStoredTwiceIsDuplicate) {
  SendAndAck(0, 1);
  Store(Batch(0, 1));
  const CheckReport report = Check();
  EXPECT_EQ(report.duplicates, 1u);
  EXPECT_EQ(report.violations(), 1u);
}

// As after a restart that lost records: the server hands out an acknowledged id again.
TEST_F(CheckerTest, IdAcknowledgedTwiceIsRejectedAndStillChecked) {
  SendAndAck(0, 1);
  model_.Sent({0, 0, 1}, Batch(1, 1, "another line"));
  EXPECT_FALSE(model_.Acked({0, 0, 1}, {"HDFS/1"}).ok());
  const CheckReport report = Check();
  EXPECT_EQ(report.altered, 1u);  // HDFS/1 holds one of the two records.
  EXPECT_EQ(report.violations(), 1u);
}

TEST_F(CheckerTest, ForgottenAdminEffectsAreViolations) {
  SendAndAck(0, 1);
  AdminAcks admin;
  admin.dictionaries.emplace_back("HDFS", 40000);
  admin.recompressions.push_back("HDFS");
  const CheckReport report = Check(admin);
  EXPECT_EQ(report.admin_violations, 2u);
}

}  // namespace
}  // namespace dictlog::crash
