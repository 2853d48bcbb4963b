// End to end against the real dictlogd (127.0.0.1 port 0, temp data dir): retries with
// a request id after a server-side timeout store one copy; oversized requests are
// refused with nothing written; MultiGet and Scan stop server-side once their deadline
// passes (the pool's read counter shows the work not done); Client::WaitForConnected
// returns once connected, and UNAVAILABLE within its timeout where nothing listens.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <grpcpp/grpcpp.h>

#include <cstdlib>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "client/client.h"
#include "gtest/gtest.h"
#include "proto/dictlog.grpc.pb.h"
#include "tests/e2e/server_process.h"

namespace dictlog {
namespace {

constexpr int kMaxRequestBytes = 4 << 20;
constexpr int kMaxRecordBytes = 65536;
constexpr int kMaxBatchRecords = 20000;
constexpr int kMaxMultiGetIds = 200000;

std::vector<v1::RecordToAppend> Batch(const std::string& category, int n,
                                      const std::string& tag) {
  std::vector<v1::RecordToAppend> batch(n);
  for (int i = 0; i < n; ++i) {
    batch[i].set_category(category);
    batch[i].set_payload(absl::StrCat(
        "081109 2036", i % 60, " ", 1000 + i, " INFO dfs.DataNode$PacketResponder: ",
        tag, " block blk_", 38865049064139660LL + i * 7919, " terminating ", i));
  }
  return batch;
}

class RobustnessE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string data_dir = std::string(std::getenv("TEST_TMPDIR")) + "/data";
    std::filesystem::remove_all(data_dir);
    server_ = std::make_unique<testing::ServerProcess>(
        testing::RunfilePath("server/daemon/dictlogd"), data_dir,
        std::vector<std::string>{
            "--auto_train=false", absl::StrCat("--max_request_bytes=", kMaxRequestBytes),
            absl::StrCat("--max_record_bytes=", kMaxRecordBytes),
            absl::StrCat("--max_batch_records=", kMaxBatchRecords),
            absl::StrCat("--max_multiget_ids=", kMaxMultiGetIds)});
    absl::StatusOr<std::string> address = server_->Start();
    ASSERT_TRUE(address.ok()) << address.status();
    client::ClientOptions options;
    options.server = *address;
    client_ = std::make_unique<client::Client>(options);
    grpc::ChannelArguments args;
    args.SetMaxSendMessageSize(64 << 20);
    args.SetMaxReceiveMessageSize(64 << 20);
    stub_ = v1::LogStore::NewStub(
        grpc::CreateCustomChannel(*address, grpc::InsecureChannelCredentials(), args));
  }

  uint64_t PoolStat(const std::string& pool, bool reads) {
    absl::StatusOr<v1::PoolInfo> info = client_->GetPool(pool);
    if (!info.ok()) return 0;
    return reads ? info->reads() : info->stats().records();
  }

  // Waits until the pool holds `records` records; false after 3 s.
  bool WaitForRecords(const std::string& pool, uint64_t records) {
    for (int i = 0; i < 60; ++i) {
      if (PoolStat(pool, false) == records) return true;
      absl::SleepFor(absl::Milliseconds(50));
    }
    return false;
  }

  std::unique_ptr<testing::ServerProcess> server_;
  std::unique_ptr<client::Client> client_;
  std::unique_ptr<v1::LogStore::Stub> stub_;
};

TEST_F(RobustnessE2eTest, RetryAfterServerSideTimeoutStoresOneCopy) {
  constexpr int kRecords = 20000;
  const std::vector<v1::RecordToAppend> batch = Batch("retry", kRecords, "retry");
  uint64_t stored = 0;
  bool landed_after_timeout = false;
  // Deadlines from 8 ms up: one of them expires while the server is still appending
  // (the batch takes tens of ms), so the first attempt lands after the client gave up.
  for (int k = 3; k < 12 && !landed_after_timeout; ++k) {
    const std::string request_id = absl::StrCat("retry-test-", k);
    v1::AppendBatchRequest request;
    for (const auto& record : batch) *request.add_records() = record;
    request.set_request_id(request_id);
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Milliseconds(1 << k)));
    v1::AppendBatchResponse response;
    const grpc::Status status = stub_->AppendBatch(&context, request, &response);
    if (status.ok()) {  // Finished in time: not the case under test.
      stored += kRecords;
      continue;
    }
    ASSERT_EQ(status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED) << status.error_message();
    landed_after_timeout = WaitForRecords("retry", stored + kRecords);
    if (!landed_after_timeout) continue;  // Never reached the handler; try longer.
    std::printf("attempt with a %d ms deadline timed out and landed\n", 1 << k);
    stored += kRecords;
    auto retry = client_->AppendBatch(batch, request_id);
    ASSERT_TRUE(retry.ok()) << retry.status();
    ASSERT_EQ(retry->size(), static_cast<size_t>(kRecords));
    EXPECT_EQ(PoolStat("retry", false), stored) << "the retry stored a second copy";
    auto again = client_->AppendBatch(batch, request_id);
    ASSERT_TRUE(again.ok()) << again.status();
    EXPECT_EQ(*again, *retry);
    EXPECT_EQ(client_->Get(retry->front())->payload(), batch.front().payload());
    EXPECT_EQ(client_->Get(retry->back())->payload(), batch.back().payload());
    // The same id with another body is refused.
    auto reused = client_->AppendBatch(Batch("retry", 1, "other"), request_id);
    EXPECT_EQ(reused.status().code(), absl::StatusCode::kAlreadyExists);
  }
  EXPECT_TRUE(landed_after_timeout)
      << "no attempt timed out on the client while landing on the server";
  EXPECT_EQ(PoolStat("retry", false), stored);
}

TEST_F(RobustnessE2eTest, ClientRetriesTimedOutAppendsWithOneRequestId) {
  client::ClientOptions options;
  options.server = server_->address();
  // Short enough that the first attempt of a 20,000-record batch usually times out;
  // retries only look the request id up, so one soon succeeds once the first attempt
  // has landed on the server. 40 attempts (about 10 s) leave room for a loaded machine
  // (8 were too few at load average 25); the assertions do not depend on which attempt
  // succeeds.
  options.timeout = absl::Milliseconds(150);
  options.append_attempts = 40;
  options.retry_backoff = absl::Milliseconds(100);
  client::Client impatient(options);
  constexpr int kRecords = kMaxBatchRecords;
  auto ids = impatient.AppendBatch(Batch("auto", kRecords, "auto"));
  ASSERT_TRUE(ids.ok()) << ids.status();
  EXPECT_EQ(ids->size(), static_cast<size_t>(kRecords));
  // Every attempt carried one request id: the pool holds one copy, now and later.
  EXPECT_TRUE(WaitForRecords("auto", kRecords));
  EXPECT_EQ(PoolStat("auto", false), static_cast<uint64_t>(kRecords));
}

TEST_F(RobustnessE2eTest, OversizedRequestsAreRefusedWithNothingWritten) {
  ASSERT_TRUE(client_->AppendBatch(Batch("keep", 100, "keep")).ok());
  auto before = client_->ListPools();
  ASSERT_TRUE(before.ok());

  // A message over --max_request_bytes: refused by gRPC before any handler runs.
  std::vector<v1::RecordToAppend> huge = Batch("keep", 100, "huge");
  for (auto& record : huge) record.set_payload(std::string(kMaxRecordBytes - 10, 'h'));
  EXPECT_EQ(client_->AppendBatch(huge).status().code(),
            absl::StatusCode::kResourceExhausted);
  // One record over --max_record_bytes in an otherwise fine batch.
  std::vector<v1::RecordToAppend> one_big = Batch("keep", 10, "big");
  one_big[5].set_payload(std::string(kMaxRecordBytes + 1, 'b'));
  EXPECT_EQ(client_->AppendBatch(one_big).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(client_->Append("keep", std::string(kMaxRecordBytes + 1, 'b')).status().code(),
            absl::StatusCode::kInvalidArgument);
  // Too many records, too many ids, a bad category in a batch.
  EXPECT_EQ(client_->AppendBatch(Batch("keep", kMaxBatchRecords + 1, "n")).status().code(),
            absl::StatusCode::kInvalidArgument);
  std::vector<std::string> ids(kMaxMultiGetIds + 1, "keep/1");
  EXPECT_EQ(client_->MultiGet(ids).status().code(), absl::StatusCode::kInvalidArgument);
  std::vector<v1::RecordToAppend> bad_category = Batch("keep", 3, "c");
  bad_category[2].set_category("no spaces allowed");
  EXPECT_EQ(client_->AppendBatch(bad_category).status().code(),
            absl::StatusCode::kInvalidArgument);

  auto after = client_->ListPools();
  ASSERT_TRUE(after.ok());
  ASSERT_EQ(after->size(), before->size());
  for (size_t i = 0; i < after->size(); ++i) {
    EXPECT_EQ((*after)[i].name(), (*before)[i].name());
    EXPECT_EQ((*after)[i].stats().records(), (*before)[i].stats().records());
    EXPECT_EQ((*after)[i].stats().stored_bytes(), (*before)[i].stats().stored_bytes());
  }
  EXPECT_EQ(client_->Get("keep/101").status().code(), absl::StatusCode::kNotFound);
}

TEST_F(RobustnessE2eTest, MultiGetPastItsDeadlineStopsServerSide) {
  auto stored = client_->AppendBatch(Batch("mg", 2000, "mg"));
  ASSERT_TRUE(stored.ok()) << stored.status();
  std::vector<std::string> ids;
  while (ids.size() < static_cast<size_t>(kMaxMultiGetIds)) {
    ids.insert(ids.end(), stored->begin(), stored->end());
  }
  v1::MultiGetRequest request;
  for (const std::string& id : ids) request.add_ids(id);
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Milliseconds(30)));
  v1::MultiGetResponse response;
  const grpc::Status status = stub_->MultiGet(&context, request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  absl::SleepFor(absl::Milliseconds(500));  // Let the handler finish whatever it does.
  const uint64_t reads = PoolStat("mg", true);
  EXPECT_LT(reads, ids.size()) << "the server decoded every id after the deadline";
  // Without a short deadline the same call reads everything.
  auto full = client_->MultiGet(ids);
  ASSERT_TRUE(full.ok()) << full.status();
  EXPECT_EQ(PoolStat("mg", true), reads + ids.size());
}

TEST_F(RobustnessE2eTest, ScanPastItsDeadlineStopsServerSide) {
  constexpr int kRecords = 60000;
  for (int i = 0; i < kRecords / kMaxBatchRecords; ++i) {
    ASSERT_TRUE(client_->AppendBatch(Batch("scan", kMaxBatchRecords, "scan")).ok());
  }
  v1::ScanRequest request;
  request.set_pool("scan");
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Milliseconds(30)));
  std::unique_ptr<grpc::ClientReader<v1::ScanResponse>> reader =
      stub_->Scan(&context, request);
  v1::ScanResponse chunk;
  size_t received = 0;
  while (reader->Read(&chunk)) {
    received += chunk.records_size();
    absl::SleepFor(absl::Milliseconds(5));  // A slow reader.
  }
  EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  absl::SleepFor(absl::Milliseconds(500));
  EXPECT_LT(received, static_cast<size_t>(kRecords));
  EXPECT_LT(PoolStat("scan", true), static_cast<uint64_t>(kRecords))
      << "the server read the whole pool after the deadline";
}

TEST_F(RobustnessE2eTest, WaitForConnectedReturnsOnceTheConnectionIsReady) {
  client::ClientOptions options;
  options.server = server_->address();
  options.own_connection = true;
  const client::Client fresh(options);
  EXPECT_TRUE(fresh.WaitForConnected(absl::Seconds(10)).ok());
  EXPECT_TRUE(fresh.ListPools().ok());
}

TEST_F(RobustnessE2eTest, WaitForConnectedTimesOutWhereNothingListens) {
  // A loopback port that was just free: bind it, read it, close it.
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  socklen_t len = sizeof(addr);
  ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  close(fd);
  client::ClientOptions options;
  options.server = absl::StrCat("127.0.0.1:", ntohs(addr.sin_port));
  options.own_connection = true;
  const client::Client nowhere(options);
  const absl::Time start = absl::Now();
  const absl::Status status = nowhere.WaitForConnected(absl::Seconds(1));
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable) << status;
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
}

}  // namespace
}  // namespace dictlog
