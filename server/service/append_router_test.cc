// Cluster-mode append routing through real gRPC (append_router.h), without Kafka: two
// DictlogServers on 127.0.0.1 port 0, each over its own RocksDB and a ShardDirectory
// told by hand what the log would say (nodes a and b, 2 partitions, 1 replica:
// partition 0 on a, partition 1 on b). Calls go to a; where a record lands shows
// which node appended it (each engine is a single node's, so it stores what it is
// given). Both require a writer's bearer token: a forwarded call carries the caller's.
#include "server/service/append_router.h"

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>
#include <vector>

#include "common/test_dir.h"
#include "gtest/gtest.h"
#include "proto/dictlog.grpc.pb.h"
#include "server/cluster/partitioning.h"
#include "server/cluster/shard_directory.h"
#include "server/service/cancelling_peer.h"
#include "server/service/dictlog_server.h"
#include "server/service/frozen_peer.h"

namespace dictlog::service {
namespace {

constexpr int kPartitions = 2;
constexpr char kBearer[] = "Bearer writer-token-0123456789";

std::unique_ptr<grpc::ClientContext> Authorized() {
  auto context = std::make_unique<grpc::ClientContext>();
  context->AddMetadata("authorization", kBearer);
  return context;
}

// A pool name on `partition` (of kPartitions), the `n`th such.
std::string PoolOn(int32_t partition, int n = 0) {
  for (int i = 0;; ++i) {
    const std::string pool = "pool" + std::to_string(i);
    if (cluster::PartitionOf(pool, kPartitions) == partition && n-- == 0) return pool;
  }
}

cluster::NodePartition Serving(int32_t partition) {
  cluster::NodePartition p;
  p.set_partition(partition);
  p.set_serving(true);
  return p;
}

struct Node {
  std::unique_ptr<engine::LogEngine> engine;
  std::unique_ptr<cluster::ShardDirectory> directory;
  std::unique_ptr<DictlogServer> server;
  std::string address;
};

class AppendRouterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    StartNode("a", &a_);
    StartNode("b", &b_);
    a_.directory->SetLocal({Serving(0)});
    b_.directory->SetLocal({Serving(1)});
    AnnounceB(absl::Now() + absl::Hours(1));  // Live all test.
    stub_ = v1::LogStore::NewStub(
        grpc::CreateChannel(a_.address, grpc::InsecureChannelCredentials()));
  }

  void TearDown() override {
    a_.server.reset();
    b_.server.reset();
  }

  void StartNode(const std::string& name, Node* node) {
    engine::EngineOptions options;
    options.store.path = FreshTestDir("_" + name);
    auto engine = engine::LogEngine::Open(options);
    ASSERT_TRUE(engine.ok()) << engine.status();
    node->engine = std::move(*engine);
    cluster::DirectoryOptions directory;
    directory.node_name = name;
    directory.partitions = kPartitions;
    directory.nodes = {"a", "b"};
    directory.replicas = 1;
    node->directory = std::make_unique<cluster::ShardDirectory>(directory);
    ServerOptions server;
    server.listen = "127.0.0.1:0";
    server.shards = node->directory.get();
    server.authorizer = &authorizer_;
    auto started = DictlogServer::Start(node->engine.get(), server);
    ASSERT_TRUE(started.ok()) << started.status();
    node->server = std::move(*started);
    node->address = "127.0.0.1:" + std::to_string(node->server->port());
  }

  // What a reads from dictlog.meta about b: serving partition 1, announced at `when`.
  void AnnounceB(absl::Time when) {
    cluster::NodeAnnouncement from_b;
    from_b.set_name("b");
    from_b.set_address(b_.address);
    from_b.set_unix_ms(absl::ToUnixMillis(when));
    *from_b.add_partitions() = Serving(1);
    a_.directory->ObserveAnnouncement(from_b);
  }

  // The payload `node` holds under `id`, or its error's text.
  static std::string Held(const Node& node, const std::string& id) {
    absl::StatusOr<v1::Record> record = node.engine->Get(id);
    return record.ok() ? record->payload() : record.status().ToString();
  }

  // a now follows nodes a, f, b with 2 replicas: partition 1's replicas are f, at
  // `address` and announced live, then b; whether a places partition 1 so.
  bool FirstReplicaOfPartition1Is(const std::string& address) const {
    ObserveFrozenFirstReplica(a_.directory.get(), address);
    return a_.directory->Place(1).addresses == std::vector<std::string>{address, b_.address};
  }

  uint64_t Forwarded(const std::string& method) const {
    const cluster::RoutingCounters counters = a_.directory->Counters();
    auto it = counters.forwarded.find(method);
    return it == counters.forwarded.end() ? 0 : it->second;
  }

  grpc::Status Append(grpc::ClientContext* context, const std::string& category,
                      const std::string& payload, std::string* id) {
    v1::AppendRequest request;
    request.set_category(category);
    request.set_payload(payload);
    v1::AppendResponse response;
    const grpc::Status status = stub_->Append(context, request, &response);
    *id = response.id();
    return status;
  }

  const auth::Authorizer authorizer_{
      *auth::ParseTokenFile("writer-token-0123456789 writer\n")};
  Node a_, b_;
  std::unique_ptr<v1::LogStore::Stub> stub_;
};

TEST_F(AppendRouterTest, AppendOfAPartitionServedElsewhereIsAppendedByItsReplica) {
  std::string id;
  const grpc::Status status = Append(Authorized().get(), PoolOn(1), "to b", &id);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(Held(b_, id), "to b");
  EXPECT_TRUE(absl::IsNotFound(a_.engine->Get(id).status()));
  EXPECT_EQ(Forwarded("Append"), 1u);
}

TEST_F(AppendRouterTest, AppendOfAPartitionServedHereIsAppendedHere) {
  std::string id;
  const grpc::Status status = Append(Authorized().get(), PoolOn(0), "stays", &id);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(Held(a_, id), "stays");
  EXPECT_EQ(Forwarded("Append"), 0u);
}

TEST_F(AppendRouterTest, ForwardedBatchRetriedWithItsRequestIdIsAppendedOnce) {
  v1::AppendBatchRequest request;
  request.set_request_id("batch-1");
  for (const char* payload : {"x", "y", "z"}) {
    v1::RecordToAppend* record = request.add_records();
    record->set_category(PoolOn(1));
    record->set_payload(payload);
  }
  v1::AppendBatchResponse first, retry;
  ASSERT_TRUE(stub_->AppendBatch(Authorized().get(), request, &first).ok());
  ASSERT_TRUE(stub_->AppendBatch(Authorized().get(), request, &retry).ok());
  ASSERT_EQ(first.ids_size(), 3);
  EXPECT_EQ(std::vector<std::string>(retry.ids().begin(), retry.ids().end()),
            std::vector<std::string>(first.ids().begin(), first.ids().end()));
  EXPECT_EQ(Held(b_, first.ids(2)), "z");
  absl::StatusOr<v1::PoolInfo> pool = b_.engine->GetPool(PoolOn(1));
  ASSERT_TRUE(pool.ok()) << pool.status();
  EXPECT_EQ(pool->stats().records(), 3u);
  EXPECT_EQ(Forwarded("AppendBatch"), 2u);
}

TEST_F(AppendRouterTest, DirectAppendIsAppendedHereSoAtMostOneHop) {
  auto context = Authorized();
  context->AddMetadata(kRouteHeader, kRouteDirect);
  std::string id;
  ASSERT_TRUE(Append(context.get(), PoolOn(1), "hop", &id).ok());
  EXPECT_EQ(Held(a_, id), "hop");
  EXPECT_EQ(Forwarded("Append"), 0u);
}

TEST_F(AppendRouterTest, WithoutALiveReplicaTheAppendIsAppendedHereAndCounted) {
  AnnounceB(absl::Now() - absl::Minutes(1));  // b's last word is a minute old.
  std::string id;
  const grpc::Status status = Append(Authorized().get(), PoolOn(1), "fallback", &id);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(Held(a_, id), "fallback");
  EXPECT_EQ(Forwarded("Append"), 0u);
  EXPECT_EQ(a_.directory->Counters().appended_without_holder, 1u);
}

TEST_F(AppendRouterTest, BatchAcrossPartitionsIsLeftToTheEngineHere) {
  v1::AppendBatchRequest request;  // Cluster mode's engine refuses it; here it is kept.
  for (int32_t partition : {0, 1}) {
    v1::RecordToAppend* record = request.add_records();
    record->set_category(PoolOn(partition));
    record->set_payload("p" + std::to_string(partition));
  }
  v1::AppendBatchResponse response;
  ASSERT_TRUE(stub_->AppendBatch(Authorized().get(), request, &response).ok());
  ASSERT_EQ(response.ids_size(), 2);
  EXPECT_EQ(Held(a_, response.ids(1)), "p1");
  EXPECT_EQ(Forwarded("AppendBatch"), 0u);
}

TEST_F(AppendRouterTest, BatchOfTwoPoolsOnTheOtherPartitionIsForwardedWhole) {
  v1::AppendBatchRequest request;
  for (int n : {0, 1}) {
    v1::RecordToAppend* record = request.add_records();
    record->set_category(PoolOn(1, n));
    record->set_payload("q" + std::to_string(n));
  }
  v1::AppendBatchResponse response;
  ASSERT_TRUE(stub_->AppendBatch(Authorized().get(), request, &response).ok());
  ASSERT_EQ(response.ids_size(), 2);
  EXPECT_EQ(Held(b_, response.ids(0)), "q0");
  EXPECT_EQ(Held(b_, response.ids(1)), "q1");
  EXPECT_EQ(Forwarded("AppendBatch"), 1u);
}

TEST_F(AppendRouterTest, ForwardedAppendsCarryTheCallersToken) {
  grpc::ClientContext anonymous;  // No token: refused by a before anything is forwarded.
  std::string id;
  EXPECT_EQ(Append(&anonymous, PoolOn(1), "no", &id).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(Forwarded("Append"), 0u);
  ASSERT_TRUE(Append(Authorized().get(), PoolOn(1), "yes", &id).ok());  // b checks it too.
  EXPECT_EQ(Held(b_, id), "yes");
}


// a follows nodes a, f, b with 2 replicas: partition 1 is held by f (frozen, still
// announced live) and b, in that order. f may have stored what it was sent, so the
// append is not sent to b after f's attempt times out: the caller gets UNAVAILABLE
// (retry with a request id) well before its deadline, and b holds nothing.
TEST_F(AppendRouterTest, AnAppendWhoseHolderDoesNotAnswerIsNotSentToAnother) {
  const FrozenPeer frozen;
  ASSERT_FALSE(frozen.address().empty());
  ASSERT_TRUE(FirstReplicaOfPartition1Is(frozen.address()));

  auto context = Authorized();
  context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
  std::string id;
  const absl::Time start = absl::Now();
  const grpc::Status status = Append(context.get(), PoolOn(1), "once", &id);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE) << status.error_message();
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));  // One attempt (1 s), not 20 s.
  EXPECT_FALSE(b_.engine->GetPool(PoolOn(1)).ok());    // b never saw it.
  EXPECT_FALSE(a_.engine->GetPool(PoolOn(1)).ok());    // Nor was it appended here.
  EXPECT_EQ(Forwarded("Append"), 1u);

  // The caller's retry: a tries f last for a while (3 s), so the retry reaches b at
  // once rather than costing another attempt timeout on f (ADR 0024).
  auto retry = Authorized();
  retry->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
  const grpc::Status again = Append(retry.get(), PoolOn(1), "once", &id);
  ASSERT_TRUE(again.ok()) << again.error_code() << " " << again.error_message();
  EXPECT_TRUE(b_.engine->GetPool(PoolOn(1)).ok());
  EXPECT_EQ(Forwarded("Append"), 2u);  // b only.
}

// A holder shutting down cancels the append in flight; it may have stored it, so the
// append is not sent to the other replica (reads are: read_router_test).
TEST_F(AppendRouterTest, AnAppendCancelledByItsHolderIsNotSentToAnother) {
  const CancellingPeer cancelling;
  ASSERT_FALSE(cancelling.address().empty());
  ASSERT_TRUE(FirstReplicaOfPartition1Is(cancelling.address()));

  auto context = Authorized();
  std::string id;
  const grpc::Status status = Append(context.get(), PoolOn(1), "once", &id);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::CANCELLED) << status.error_message();
  EXPECT_EQ(cancelling.calls(), 1);
  EXPECT_FALSE(b_.engine->GetPool(PoolOn(1)).ok());  // b never saw it.
  EXPECT_EQ(Forwarded("Append"), 1u);
}

}  // namespace
}  // namespace dictlog::service
