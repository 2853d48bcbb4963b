// End to end against the real dictlogd with its default response budget
// (--max_response_bytes, 64 MiB): a MultiGet asking 10,000 times for one ~900 KB record
// is answered, its first records in full and the rest RESOURCE_EXHAUSTED per id, with
// the server's peak memory bounded, and the server keeps serving; Scan messages of
// large records stay under their byte bound; the client library asks again for the
// ids past a (small) budget and returns every record.
#include <grpcpp/grpcpp.h>
#include <signal.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "client/client.h"
#include "gtest/gtest.h"
#include "proto/dictlog.grpc.pb.h"
#include "tests/e2e/server_process.h"

namespace dictlog {
namespace {

constexpr uint64_t kDefaultBudget = 64 << 20;  // dictlogd's --max_response_bytes.
constexpr uint64_t kScanChunkBytes = 2 << 20;  // engine::LogEngine::kScanChunkBytes.
constexpr size_t kRecordBytes = 900 << 10;

std::string Incompressible(size_t n, uint32_t seed) {
  std::mt19937 random(seed);
  std::string out(n, '\0');
  for (char& c : out) c = static_cast<char>(random());
  return out;
}

// The peak resident set of process `pid` (VmHWM in /proc/<pid>/status), in bytes.
uint64_t PeakRssBytes(pid_t pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/status"));
  std::string line;
  while (std::getline(in, line)) {
    if (!absl::StartsWith(line, "VmHWM:")) continue;
    std::vector<std::string> fields =
        absl::StrSplit(line, ' ', absl::SkipWhitespace());
    uint64_t kib = 0;
    if (fields.size() >= 2 && absl::SimpleAtoi(fields[1], &kib)) return kib << 10;
  }
  return 0;
}

class ResponseBudgetE2eTest : public ::testing::Test {
 protected:
  void Start(std::vector<std::string> flags) {
    const std::string data_dir = std::string(std::getenv("TEST_TMPDIR")) + "/data";
    std::filesystem::remove_all(data_dir);
    flags.push_back("--auto_train=false");
    server_ = std::make_unique<testing::ServerProcess>(
        testing::RunfilePath("server/daemon/dictlogd"), data_dir, flags);
    absl::StatusOr<std::string> address = server_->Start();
    ASSERT_TRUE(address.ok()) << address.status();
    client::ClientOptions options;
    options.server = *address;
    options.timeout = absl::Seconds(120);
    client_ = std::make_unique<client::Client>(options);
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(128 << 20);
    stub_ = v1::LogStore::NewStub(
        grpc::CreateCustomChannel(*address, grpc::InsecureChannelCredentials(), args));
  }

  std::unique_ptr<testing::ServerProcess> server_;
  std::unique_ptr<client::Client> client_;
  std::unique_ptr<v1::LogStore::Stub> stub_;
};

TEST_F(ResponseBudgetE2eTest, TenThousandCopiesOfALargeRecordAreBoundedAndServed) {
  Start({});
  const std::string payload = Incompressible(kRecordBytes, 1);
  absl::StatusOr<std::string> id = client_->Append("big", payload);
  ASSERT_TRUE(id.ok()) << id.status();
  const uint64_t rss_before = PeakRssBytes(server_->pid());

  // The raw stub: one call of 10,000 ids, not split by the client library.
  v1::MultiGetRequest request;
  for (int i = 0; i < 10000; ++i) request.add_ids(*id);
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(120)));
  v1::MultiGetResponse response;
  const grpc::Status status = stub_->MultiGet(&context, request, &response);
  ASSERT_TRUE(status.ok()) << status.error_code() << " " << status.error_message();
  ASSERT_EQ(response.results_size(), 10000);
  const int fit = static_cast<int>(kDefaultBudget / kRecordBytes);  // 72.
  for (int i = 0; i < fit; ++i) {
    ASSERT_TRUE(response.results(i).has_record()) << i;
    ASSERT_EQ(response.results(i).record().payload(), payload) << i;
  }
  for (int i = fit; i < 10000; ++i) {
    ASSERT_EQ(response.results(i).error().code(), grpc::StatusCode::RESOURCE_EXHAUSTED)
        << i;
  }
  const uint64_t peak = PeakRssBytes(server_->pid());
  std::printf("dictlogd peak RSS: %.1f MiB before the MultiGet, %.1f MiB after\n",
              rss_before / 1048576.0, peak / 1048576.0);
  EXPECT_GT(peak, 0u);
  EXPECT_LT(peak, uint64_t{512} << 20);

  // Still serving.
  absl::StatusOr<v1::Record> record = client_->Get(*id);
  ASSERT_TRUE(record.ok()) << record.status();
  EXPECT_EQ(record->payload(), payload);
  EXPECT_EQ(kill(server_->pid(), 0), 0);
  EXPECT_EQ(*server_->Stop(), 0);
}

TEST_F(ResponseBudgetE2eTest, ScanMessagesOfLargeRecordsStayUnderTheirBound) {
  Start({});
  std::vector<std::string> payloads;
  for (uint32_t i = 0; i < 12; ++i) {
    payloads.push_back(i % 2 == 0 ? Incompressible(kRecordBytes, i)
                                  : std::string(kRecordBytes, static_cast<char>('a' + i)));
    ASSERT_TRUE(client_->Append("scan", payloads.back()).ok());
  }
  v1::ScanRequest request;
  request.set_pool("scan");
  grpc::ClientContext context;
  std::unique_ptr<grpc::ClientReader<v1::ScanResponse>> reader =
      stub_->Scan(&context, request);
  v1::ScanResponse message;
  std::vector<std::string> read;
  int messages = 0;
  while (reader->Read(&message)) {
    ++messages;
    // Payloads within the bound, plus a few bytes of ids and framing per record.
    EXPECT_LE(message.ByteSizeLong(), kScanChunkBytes + 4096);
    EXPECT_LT(message.ByteSizeLong(), 4u << 20);  // gRPC's default receive limit.
    for (const v1::Record& record : message.records()) read.push_back(record.payload());
  }
  ASSERT_TRUE(reader->Finish().ok());
  EXPECT_GE(messages, 3);
  ASSERT_EQ(read.size(), payloads.size());
  for (size_t i = 0; i < read.size(); ++i) EXPECT_EQ(read[i], payloads[i]) << i;
}

TEST_F(ResponseBudgetE2eTest, ClientMultiGetAsksAgainPastTheBudget) {
  Start({"--max_response_bytes=10000"});
  std::vector<v1::RecordToAppend> batch;
  for (uint32_t i = 0; i < 50; ++i) {
    batch.emplace_back();
    batch.back().set_category(i % 2 == 0 ? "a" : "b");
    batch.back().set_payload(Incompressible(1000 + i, i));
  }
  absl::StatusOr<std::vector<std::string>> ids = client_->AppendBatch(batch);
  ASSERT_TRUE(ids.ok()) << ids.status();
  // Every id three times, a missing and a malformed one in between: about 153 KB
  // through a 10 KB budget, so more than a dozen calls.
  std::vector<std::string> asked;
  for (int round = 0; round < 3; ++round) {
    asked.insert(asked.end(), ids->begin(), ids->end());
    asked.push_back("a/999");
    asked.push_back("malformed");
  }
  auto results = client_->MultiGet(asked);
  ASSERT_TRUE(results.ok()) << results.status();
  ASSERT_EQ(results->size(), asked.size());
  for (size_t i = 0; i < asked.size(); ++i) {
    const size_t k = i % (ids->size() + 2);
    if (k == ids->size()) {
      EXPECT_EQ((*results)[i].status().code(), absl::StatusCode::kNotFound) << i;
    } else if (k == ids->size() + 1) {
      EXPECT_EQ((*results)[i].status().code(), absl::StatusCode::kInvalidArgument) << i;
    } else {
      ASSERT_TRUE((*results)[i].ok()) << i << " " << (*results)[i].status();
      EXPECT_EQ((*results)[i]->id(), (*ids)[k]);
      EXPECT_EQ((*results)[i]->payload(), batch[k].payload()) << i;
    }
  }
}

}  // namespace
}  // namespace dictlog
