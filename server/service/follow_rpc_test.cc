// LogStore.Follow through real gRPC: an in-process DictlogServer on 127.0.0.1 port 0
// over a real RocksDB. Records arrive as appended, a client cancel and a server
// shutdown end the stream promptly, tokens are checked as for Scan, and streams past
// the limit are RESOURCE_EXHAUSTED.
#include <grpcpp/grpcpp.h>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/test_dir.h"
#include "gtest/gtest.h"
#include "proto/dictlog.grpc.pb.h"
#include "server/auth/authorizer.h"
#include "server/auth/token_file.h"
#include "server/service/dictlog_server.h"

namespace dictlog::service {
namespace {

constexpr char kReaderA[] = "reader-a-token-0123456789";

class FollowRpcTest : public ::testing::Test {
 protected:
  void Start(const std::string& tokens = "") {
    engine::EngineOptions options;
    options.store.path = FreshTestDir();
    options.auto_train = false;
    options.follow.max_followers = 2;
    auto engine = engine::LogEngine::Open(options);
    ASSERT_TRUE(engine.ok()) << engine.status();
    engine_ = std::move(*engine);
    ServerOptions server_options;
    server_options.listen = "127.0.0.1:0";
    if (!tokens.empty()) {
      auto entries = auth::ParseTokenFile(tokens);
      ASSERT_TRUE(entries.ok()) << entries.status();
      authorizer_ = std::make_unique<auth::Authorizer>(*std::move(entries));
      server_options.authorizer = authorizer_.get();
    }
    auto server = DictlogServer::Start(engine_.get(), server_options);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
    store_ = v1::LogStore::NewStub(grpc::CreateChannel(
        absl::StrCat("127.0.0.1:", server_->port()), grpc::InsecureChannelCredentials()));
  }

  void Append(const std::string& category, int n) {
    std::vector<engine::AppendInput> inputs(n, {category, "a line"});
    ASSERT_TRUE(engine_->Append(inputs).ok());
  }

  // Reads from `reader` until it has `n` records; their ids.
  static std::vector<std::string> ReadIds(grpc::ClientReader<v1::FollowResponse>& reader,
                                          size_t n) {
    std::vector<std::string> ids;
    v1::FollowResponse response;
    while (ids.size() < n && reader.Read(&response)) {
      for (const v1::Record& record : response.records()) ids.push_back(record.id());
    }
    return ids;
  }

  static v1::FollowRequest FromStart(const std::string& pool) {
    v1::FollowRequest request;
    request.set_pool(pool);
    request.set_from_start(true);
    return request;
  }

  std::unique_ptr<auth::Authorizer> authorizer_;
  std::unique_ptr<engine::LogEngine> engine_;
  std::unique_ptr<DictlogServer> server_;
  std::unique_ptr<v1::LogStore::Stub> store_;
};

TEST_F(FollowRpcTest, StreamsStoredThenLiveRecordsAndEndsOnCancel) {
  Start();
  Append("web", 3);
  grpc::ClientContext context;
  auto reader = store_->Follow(&context, FromStart("web"));
  EXPECT_EQ(ReadIds(*reader, 3), (std::vector<std::string>{"web/1", "web/2", "web/3"}));
  Append("web", 2);
  EXPECT_EQ(ReadIds(*reader, 2), (std::vector<std::string>{"web/4", "web/5"}));
  context.TryCancel();
  v1::FollowResponse ignored;
  while (reader->Read(&ignored)) {}
  EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::CANCELLED);
}

TEST_F(FollowRpcTest, ShutdownEndsStreamsPromptlyWithUnavailable) {
  Start();
  Append("web", 1);
  grpc::ClientContext context;
  auto reader = store_->Follow(&context, FromStart("web"));
  ASSERT_EQ(ReadIds(*reader, 1).size(), 1u);
  const absl::Time start = absl::Now();
  server_->Shutdown(absl::Seconds(60));  // A grace far longer than the wait below.
  server_->Wait();
  EXPECT_LT(absl::Now() - start, absl::Seconds(20));
  v1::FollowResponse ignored;
  while (reader->Read(&ignored)) {}
  const grpc::Status status = reader->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE) << status.error_message();
  EXPECT_NE(status.error_message().find("resume after web/1"), std::string::npos)
      << status.error_message();
}

TEST_F(FollowRpcTest, LimitedTokenFollowsOnlyItsCategoriesNeverAPool) {
  Start(absl::StrCat(kReaderA, " reader a\n"));
  Append("a", 1);
  Append("b", 1);
  auto follow = [&](v1::FollowRequest request) {
    grpc::ClientContext context;
    context.AddMetadata("authorization", absl::StrCat("Bearer ", kReaderA));
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    auto reader = store_->Follow(&context, request);
    const size_t read = ReadIds(*reader, 1).size();
    if (read > 0) context.TryCancel();  // Else the server has ended it.
    v1::FollowResponse ignored;
    while (reader->Read(&ignored)) {}
    return std::make_pair(read, reader->Finish().error_code());
  };
  v1::FollowRequest other;
  other.set_category("b");
  other.set_from_start(true);
  EXPECT_EQ(follow(other), std::make_pair(size_t{0}, grpc::StatusCode::PERMISSION_DENIED));
  EXPECT_EQ(follow(FromStart("a")),
            std::make_pair(size_t{0}, grpc::StatusCode::PERMISSION_DENIED));
  v1::FollowRequest own;
  own.set_category("a");
  own.set_from_start(true);
  EXPECT_EQ(follow(own).first, 1u);
  grpc::ClientContext anonymous;
  auto reader = store_->Follow(&anonymous, own);
  EXPECT_EQ(ReadIds(*reader, 1).size(), 0u);
  EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::UNAUTHENTICATED);
}

TEST_F(FollowRpcTest, StreamsPastTheLimitAreResourceExhausted) {
  Start();
  Append("web", 1);
  grpc::ClientContext first_context, second_context, third_context;
  auto first = store_->Follow(&first_context, FromStart("web"));
  auto second = store_->Follow(&second_context, FromStart("web"));
  ASSERT_EQ(ReadIds(*first, 1).size(), 1u);
  ASSERT_EQ(ReadIds(*second, 1).size(), 1u);
  auto third = store_->Follow(&third_context, FromStart("web"));
  EXPECT_EQ(ReadIds(*third, 1).size(), 0u);
  const grpc::Status status = third->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED)
      << status.error_message();
  first_context.TryCancel();
  second_context.TryCancel();
}

}  // namespace
}  // namespace dictlog::service
