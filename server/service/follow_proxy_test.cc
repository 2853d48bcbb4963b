// Follow in cluster mode through real gRPC (follow_proxy.h), without Kafka: three
// DictlogServers on 127.0.0.1 port 0 (nodes a, b, c; 2 partitions, 2 replicas:
// partition 1 on b then c, not on a), each over its own RocksDB and a ShardDirectory
// told by hand what the log would say. b and c hold the same records of partition 1's
// pool (as two replicas do). A follow sent to a is streamed from b; when b goes away
// mid-stream, from c after the last record passed on; a caller's cancel ends b's
// stream; a's shutdown ends it at once; a direct call gets NotServedHere; a's proxied
// streams count toward its --max_follow_streams.
#include <grpcpp/grpcpp.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "common/test_dir.h"
#include "gtest/gtest.h"
#include "proto/dictlog.grpc.pb.h"
#include "server/cluster/partitioning.h"
#include "server/cluster/shard_directory.h"
#include "server/service/dictlog_server.h"
#include "server/service/read_router.h"

namespace dictlog::service {
namespace {

constexpr int kPartitions = 2;

struct Node {
  std::unique_ptr<engine::LogEngine> engine;
  std::unique_ptr<cluster::ShardDirectory> directory;
  std::unique_ptr<DictlogServer> server;
  std::string address;
};

cluster::NodePartition Serving(int32_t partition) {
  cluster::NodePartition p;
  p.set_partition(partition);
  p.set_serving(true);
  return p;
}

// A pool name on `partition` (of kPartitions).
std::string PoolOn(int32_t partition) {
  for (int i = 0;; ++i) {
    const std::string pool = "pool" + std::to_string(i);
    if (cluster::PartitionOf(pool, kPartitions) == partition) return pool;
  }
}

// A context whose call ends within 30 s whatever happens (a failing test never hangs).
void Bound(grpc::ClientContext* context) {
  context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
}

// Reads from `reader` until it has `n` records (or the stream ends); their ids.
std::vector<std::string> ReadIds(grpc::ClientReader<v1::FollowResponse>& reader, size_t n) {
  std::vector<std::string> ids;
  v1::FollowResponse response;
  while (ids.size() < n && reader.Read(&response)) {
    for (const v1::Record& record : response.records()) ids.push_back(record.id());
  }
  return ids;
}

class FollowProxyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (auto [name, node] : {std::pair{"a", &a_}, {"b", &b_}, {"c", &c_}}) {
      StartNode(name, node);
    }
    a_.directory->SetLocal({Serving(0)});
    b_.directory->SetLocal({Serving(0), Serving(1)});
    c_.directory->SetLocal({Serving(1)});
    for (Node* observer : {&a_, &b_, &c_}) {
      observer->directory->ObserveAnnouncement(Announcement("b", b_, {0, 1}));
      observer->directory->ObserveAnnouncement(Announcement("c", c_, {1}));
    }
    pool_ = PoolOn(1);
    AppendToReplicas(3);
    stub_ = v1::LogStore::NewStub(
        grpc::CreateChannel(a_.address, grpc::InsecureChannelCredentials()));
  }

  void StartNode(const std::string& name, Node* node) {
    engine::EngineOptions options;
    options.store.path = FreshTestDir("_" + name);
    options.auto_train = false;
    options.follow.max_followers = 2;
    auto engine = engine::LogEngine::Open(options);
    ASSERT_TRUE(engine.ok()) << engine.status();
    node->engine = std::move(*engine);
    cluster::DirectoryOptions directory;
    directory.node_name = name;
    directory.partitions = kPartitions;
    directory.nodes = {"a", "b", "c"};
    directory.replicas = 2;
    node->directory = std::make_unique<cluster::ShardDirectory>(directory);
    ServerOptions server;
    server.listen = "127.0.0.1:0";
    server.shards = node->directory.get();
    auto started = DictlogServer::Start(node->engine.get(), server);
    ASSERT_TRUE(started.ok()) << started.status();
    node->server = std::move(*started);
    node->address = "127.0.0.1:" + std::to_string(node->server->port());
  }

  // What the others read from dictlog.meta about `node`: live all test.
  static cluster::NodeAnnouncement Announcement(const std::string& name, const Node& node,
                                                const std::vector<int32_t>& serving) {
    cluster::NodeAnnouncement announcement;
    announcement.set_name(name);
    announcement.set_address(node.address);
    announcement.set_unix_ms(absl::ToUnixMillis(absl::Now()) + 3'600'000);
    for (int32_t p : serving) *announcement.add_partitions() = Serving(p);
    return announcement;
  }

  // `n` records of pool_ on both replicas (b and c give them the same ids).
  void AppendToReplicas(int n) {
    for (Node* replica : {&b_, &c_}) {
      if (replica->server == nullptr) continue;
      std::vector<engine::AppendInput> inputs(n, {pool_, "a line"});
      ASSERT_TRUE(replica->engine->Append(inputs).ok());
    }
  }

  v1::FollowRequest FromStart() const {
    v1::FollowRequest request;
    request.set_pool(pool_);
    request.set_from_start(true);
    return request;
  }

  std::vector<std::string> Ids(int first, int last) const {
    std::vector<std::string> ids;
    for (int seq = first; seq <= last; ++seq) ids.push_back(pool_ + "/" + std::to_string(seq));
    return ids;
  }

  void TearDown() override {
    for (Node* node : {&a_, &b_, &c_}) node->server.reset();
  }

  Node a_, b_, c_;
  std::string pool_;
  std::unique_ptr<v1::LogStore::Stub> stub_;
};

TEST_F(FollowProxyTest, FollowOnANodeNotHoldingThePoolStreamsFromAReplica) {
  grpc::ClientContext context;
  Bound(&context);
  auto reader = stub_->Follow(&context, FromStart());
  EXPECT_EQ(ReadIds(*reader, 3), Ids(1, 3));
  AppendToReplicas(2);
  EXPECT_EQ(ReadIds(*reader, 2), Ids(4, 5));
  EXPECT_EQ(a_.directory->Counters().forwarded.at("Follow"), 1u);
  EXPECT_EQ(b_.engine->FollowStatistics().connected, 1u);  // b is the first replica.
  EXPECT_EQ(c_.engine->FollowStatistics().connected, 0u);
  context.TryCancel();
}

TEST_F(FollowProxyTest, ReplicaGoingAwayMidStreamIsFollowedByTheNextWithoutLossOrRepeat) {
  grpc::ClientContext context;
  Bound(&context);
  auto reader = stub_->Follow(&context, FromStart());
  ASSERT_EQ(ReadIds(*reader, 3), Ids(1, 3));
  b_.server->Shutdown(absl::Seconds(5));  // Ends b's follow streams: UNAVAILABLE.
  b_.server->Wait();
  b_.server.reset();
  AppendToReplicas(2);  // On c only now.
  EXPECT_EQ(ReadIds(*reader, 2), Ids(4, 5));
  EXPECT_EQ(c_.engine->FollowStatistics().connected, 1u);
  context.TryCancel();
  v1::FollowResponse ignored;
  EXPECT_FALSE(reader->Read(&ignored));  // Nothing more: 1..3 were not sent again.
  EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::CANCELLED);
}

TEST_F(FollowProxyTest, CallerCancelEndsTheReplicasStream) {
  {
    grpc::ClientContext context;
    Bound(&context);
    auto reader = stub_->Follow(&context, FromStart());
    ASSERT_EQ(ReadIds(*reader, 3), Ids(1, 3));
    ASSERT_EQ(b_.engine->FollowStatistics().connected, 1u);
    context.TryCancel();
    v1::FollowResponse ignored;
    while (reader->Read(&ignored)) {}
    EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::CANCELLED);
  }
  // Nothing is appended: only the cancel can end b's stream (within its 100 ms wait).
  const absl::Time give_up = absl::Now() + absl::Seconds(10);
  while (b_.engine->FollowStatistics().connected != 0 && absl::Now() < give_up) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  EXPECT_EQ(b_.engine->FollowStatistics().connected, 0u);
}

TEST_F(FollowProxyTest, DirectFollowOfAPoolNotServedHereGetsNotServedHere) {
  grpc::ClientContext context;
  context.AddMetadata(kRouteHeader, kRouteDirect);
  Bound(&context);
  auto reader = stub_->Follow(&context, FromStart());
  EXPECT_TRUE(ReadIds(*reader, 1).empty());
  const grpc::Status status = reader->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << status.error_message();
  EXPECT_FALSE(status.error_details().empty());  // NotServedHere naming b and c.
  EXPECT_EQ(a_.directory->Counters().not_served_here, 1u);
}

TEST_F(FollowProxyTest, ProxiedStreamsCountTowardTheProxysLimit) {
  grpc::ClientContext first, second, third;
  for (grpc::ClientContext* context : {&first, &second, &third}) Bound(context);
  auto one = stub_->Follow(&first, FromStart());
  auto two = stub_->Follow(&second, FromStart());
  ASSERT_EQ(ReadIds(*one, 3).size(), 3u);
  ASSERT_EQ(ReadIds(*two, 3).size(), 3u);
  EXPECT_EQ(a_.engine->FollowStatistics().connected, 2u);
  auto three = stub_->Follow(&third, FromStart());
  EXPECT_TRUE(ReadIds(*three, 1).empty());
  EXPECT_EQ(three->Finish().error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  first.TryCancel();
  second.TryCancel();
}

TEST_F(FollowProxyTest, ShutdownOfTheProxyEndsItsStreamsAtOnceNamingWhereToResume) {
  grpc::ClientContext context;
  Bound(&context);
  auto reader = stub_->Follow(&context, FromStart());
  ASSERT_EQ(ReadIds(*reader, 3), Ids(1, 3));
  const absl::Time start = absl::Now();
  a_.server->Shutdown(absl::Seconds(60));  // A grace far longer than the wait below.
  a_.server->Wait();
  EXPECT_LT(absl::Now() - start, absl::Seconds(20));
  v1::FollowResponse ignored;
  while (reader->Read(&ignored)) {}
  const grpc::Status status = reader->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE) << status.error_message();
  EXPECT_NE(status.error_message().find("resume after " + Ids(3, 3)[0]), std::string::npos)
      << status.error_message();
}

}  // namespace
}  // namespace dictlog::service
