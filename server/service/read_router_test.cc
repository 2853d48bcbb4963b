// Cluster-mode read routing through real gRPC (read_router.h), without Kafka: two
// DictlogServers on 127.0.0.1 port 0, each over its own RocksDB and a ShardDirectory
// told by hand what the log would say (nodes a and b, 2 partitions, 1 replica:
// partition 0 on a, partition 1 on b; b's announcement with its real address). Both
// require a bearer token: a forwarded call carries the caller's.
#include "server/service/read_router.h"

#include <grpcpp/grpcpp.h>
#include <grpcpp/server_builder.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "common/test_dir.h"
#include "gtest/gtest.h"
#include "proto/dictlog.grpc.pb.h"
#include "server/cluster/partitioning.h"
#include "server/cluster/shard_directory.h"
#include "server/service/cancelling_peer.h"
#include "server/service/dictlog_server.h"
#include "server/service/frozen_peer.h"
#include "server/service/packed_frames.h"

namespace dictlog::service {
namespace {

constexpr int kPartitions = 2;
constexpr char kBearer[] = "Bearer reader-token-0123456789";

// A call context with the reader's token.
std::unique_ptr<grpc::ClientContext> Authorized() {
  auto context = std::make_unique<grpc::ClientContext>();
  context->AddMetadata("authorization", kBearer);
  return context;
}

// A pool name on `partition` (of kPartitions).
std::string PoolOn(int32_t partition) {
  for (int i = 0;; ++i) {
    const std::string pool = "pool" + std::to_string(i);
    if (cluster::PartitionOf(pool, kPartitions) == partition) return pool;
  }
}

// A replica that answers a Scan with one record and remembers the deadline the call
// reached it with (gRPC carries the caller's deadline to the server).
class ScanPeer final : public v1::LogStore::Service {
 public:
  ScanPeer() {
    int port = 0;
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(this);
    server_ = builder.BuildAndStart();
    if (server_ != nullptr && port > 0) address_ = "127.0.0.1:" + std::to_string(port);
  }
  ~ScanPeer() override {
    if (server_ != nullptr) server_->Shutdown();
  }
  grpc::Status Scan(grpc::ServerContext* context, const v1::ScanRequest*,
                    grpc::ServerWriter<v1::ScanResponse>* writer) override {
    {
      absl::MutexLock lock(&mu_);
      deadline_ = context->deadline();
    }
    v1::ScanResponse response;
    response.add_records()->set_payload("from the peer");
    writer->Write(response);
    return grpc::Status::OK;
  }
  const std::string& address() const { return address_; }
  std::chrono::system_clock::time_point deadline() const {
    absl::MutexLock lock(&mu_);
    return deadline_;
  }

 private:
  std::unique_ptr<grpc::Server> server_;
  std::string address_;
  mutable absl::Mutex mu_;
  std::chrono::system_clock::time_point deadline_ ABSL_GUARDED_BY(mu_);
};

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

class ReadRouterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    StartNode("a", &a_);
    StartNode("b", &b_);
    a_.directory->SetLocal({Serving(0)});
    b_.directory->SetLocal({Serving(1)});
    cluster::NodeAnnouncement from_b;  // What a reads from dictlog.meta about b.
    from_b.set_name("b");
    from_b.set_address(b_.address);
    from_b.set_unix_ms(absl::ToUnixMillis(absl::Now()) + 3'600'000);  // Live all test.
    *from_b.add_partitions() = Serving(1);
    a_.directory->ObserveAnnouncement(from_b);
    pool0_ = PoolOn(0);
    pool1_ = PoolOn(1);
    for (int i = 0; i < 3; ++i) {  // Each pool's records on its holder only.
      ids0_.push_back(Append(a_, pool0_, "zero " + std::to_string(i)));
      ids1_.push_back(Append(b_, pool1_, "one " + std::to_string(i)));
    }
    stub_ = v1::LogStore::NewStub(
        grpc::CreateChannel(a_.address, grpc::InsecureChannelCredentials()));
  }

  void StartNode(const std::string& name, Node* node) {
    engine::EngineOptions options;
    options.store.path = FreshTestDir("_" + name);
    if (name == "a") options.max_response_bytes = ResponseBudgetOfA();
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

  virtual size_t ResponseBudgetOfA() const { return 64 << 20; }

  // a now follows nodes a, f, b with 2 replicas: partition 1's replicas are f, at
  // `address` and announced live, then b; whether a places partition 1 so.
  // Get(id) through a, with the reader's token.
  grpc::Status GetThroughA(const std::string& id, v1::GetResponse* response) const {
    auto context = Authorized();
    v1::GetRequest request;
    request.set_id(id);
    return stub_->Get(context.get(), request, response);
  }

  bool FirstReplicaOfPartition1Is(const std::string& address) const {
    ObserveFrozenFirstReplica(a_.directory.get(), address);
    return a_.directory->Place(1).addresses == std::vector<std::string>{address, b_.address};
  }

  static std::string Append(const Node& node, const std::string& category,
                            const std::string& payload) {
    const engine::AppendInput input{category, payload};
    auto ids = node.engine->Append({&input, 1});
    EXPECT_TRUE(ids.ok()) << ids.status();
    return ids.ok() ? (*ids)[0] : "";
  }

  void TearDown() override {
    a_.server.reset();
    b_.server.reset();
  }

  const auth::Authorizer authorizer_{
      *auth::ParseTokenFile("reader-token-0123456789 reader\n")};
  Node a_, b_;
  std::string pool0_, pool1_;
  std::vector<std::string> ids0_, ids1_;
  std::unique_ptr<v1::LogStore::Stub> stub_;
};

TEST_F(ReadRouterTest, GetOfAPartitionHeldElsewhereIsForwarded) {
  auto context = Authorized();
  v1::GetRequest request;
  request.set_id(ids1_[1]);
  v1::GetResponse response;
  const grpc::Status status = stub_->Get(context.get(), request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.record().payload(), "one 1");
  EXPECT_EQ(a_.directory->Counters().forwarded.at("Get"), 1u);
}

TEST_F(ReadRouterTest, DirectReadGetsNotServedHereNamingTheReplica) {
  auto context = Authorized();
  context->AddMetadata(kRouteHeader, kRouteDirect);
  v1::GetRequest request;
  request.set_id(ids1_[0]);
  v1::GetResponse response;
  const grpc::Status status = stub_->Get(context.get(), request, &response);
  ASSERT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  v1::RpcStatus details;
  ASSERT_TRUE(details.ParseFromString(status.error_details()));
  EXPECT_EQ(details.code(), grpc::StatusCode::FAILED_PRECONDITION);
  ASSERT_EQ(details.details_size(), 1);
  EXPECT_EQ(details.details(0).type_url(), "type.googleapis.com/dictlog.v1.NotServedHere");
  v1::NotServedHere where;
  ASSERT_TRUE(where.ParseFromString(details.details(0).value()));
  EXPECT_EQ(where.partition(), 1u);
  ASSERT_EQ(where.replica_addresses_size(), 1);
  EXPECT_EQ(where.replica_addresses(0), b_.address);
  EXPECT_EQ(a_.directory->Counters().not_served_here, 1u);
  // A direct read of a partition a serves is answered.
  auto here = Authorized();
  here->AddMetadata(kRouteHeader, kRouteDirect);
  request.set_id(ids0_[0]);
  ASSERT_TRUE(stub_->Get(here.get(), request, &response).ok());
  EXPECT_EQ(response.record().payload(), "zero 0");
}

TEST_F(ReadRouterTest, MultiGetAcrossPartitionsMergesInRequestOrder) {
  auto context = Authorized();
  v1::MultiGetRequest request;
  for (const std::string& id : {ids1_[2], ids0_[0], ids1_[0], std::string("bad"), ids0_[2]}) {
    request.add_ids(id);
  }
  v1::MultiGetResponse response;
  ASSERT_TRUE(stub_->MultiGet(context.get(), request, &response).ok());
  ASSERT_EQ(response.results_size(), 5);
  EXPECT_EQ(response.results(0).record().payload(), "one 2");
  EXPECT_EQ(response.results(1).record().payload(), "zero 0");
  EXPECT_EQ(response.results(2).record().payload(), "one 0");
  EXPECT_EQ(response.results(3).error().code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(response.results(4).record().payload(), "zero 2");
  EXPECT_EQ(response.results(2).record().id(), ids1_[0]);
}

TEST_F(ReadRouterTest, PackedMultiGetFramesAcrossPartitionsEqualsThePerResultForm) {
  v1::MultiGetFramesRequest request;
  for (const std::string& id : {ids0_[1], ids1_[1], ids1_[2], ids0_[0]}) request.add_ids(id);
  auto per_result_context = Authorized();
  v1::MultiGetFramesResponse per_result;
  ASSERT_TRUE(stub_->MultiGetFrames(per_result_context.get(), request, &per_result).ok());
  ASSERT_EQ(per_result.results_size(), 4);
  EXPECT_EQ(per_result.results(1).record().id(), ids1_[1]);
  std::vector<absl::StatusOr<v1::RecordFrame>> results;
  for (const v1::MultiGetFramesResult& result : per_result.results()) {
    ASSERT_TRUE(result.has_record()) << result.error().message();
    results.push_back(result.record());
  }
  v1::PackedFrames expected;
  PackFrames(results, &expected);
  request.set_packed(true);
  auto packed_context = Authorized();
  v1::MultiGetFramesResponse packed;
  ASSERT_TRUE(stub_->MultiGetFrames(packed_context.get(), request, &packed).ok());
  EXPECT_EQ(packed.results_size(), 0);
  EXPECT_EQ(packed.packed().SerializeAsString(), expected.SerializeAsString());
}

TEST_F(ReadRouterTest, ScanOfAPoolHeldElsewhereIsForwarded) {
  auto context = Authorized();
  v1::ScanRequest request;
  request.set_pool(pool1_);
  auto reader = stub_->Scan(context.get(), request);
  std::vector<std::string> payloads;
  v1::ScanResponse message;
  while (reader->Read(&message)) {
    for (const v1::Record& record : message.records()) payloads.push_back(record.payload());
  }
  ASSERT_TRUE(reader->Finish().ok());
  EXPECT_EQ(payloads, (std::vector<std::string>{"one 0", "one 1", "one 2"}));
}

// A forwarded Scan lasts as long as its records take to send: the replica gets the
// caller's deadline, not the attempt timeout (1 s) that would end a long scan ABORTED
// part-way on a replica that is not the last.
TEST_F(ReadRouterTest, AForwardedScanHasTheCallersDeadlineOnEveryReplica) {
  ScanPeer peer;
  ASSERT_FALSE(peer.address().empty());
  ASSERT_TRUE(FirstReplicaOfPartition1Is(peer.address()));  // Then b: not the last.
  auto context = Authorized();
  const auto caller_deadline = std::chrono::system_clock::now() + std::chrono::seconds(60);
  context->set_deadline(caller_deadline);
  v1::ScanRequest request;
  request.set_pool(pool1_);
  auto reader = stub_->Scan(context.get(), request);
  std::vector<std::string> payloads;
  v1::ScanResponse message;
  while (reader->Read(&message)) {
    for (const v1::Record& record : message.records()) payloads.push_back(record.payload());
  }
  const grpc::Status status = reader->Finish();
  ASSERT_TRUE(status.ok()) << status.error_code() << " " << status.error_message();
  EXPECT_EQ(payloads, std::vector<std::string>{"from the peer"});
  EXPECT_GT(peer.deadline(), caller_deadline - std::chrono::seconds(10))
      << "the replica got "
      << std::chrono::duration_cast<std::chrono::milliseconds>(
             peer.deadline() - std::chrono::system_clock::now())
             .count()
      << " ms";
}

TEST_F(ReadRouterTest, ForwardedCallsCarryTheCallersToken) {
  grpc::ClientContext anonymous;  // No token: refused by a before anything is forwarded.
  v1::GetRequest request;
  request.set_id(ids1_[0]);
  v1::GetResponse response;
  EXPECT_EQ(stub_->Get(&anonymous, request, &response).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(a_.directory->Counters().forwarded.count("Get"), 0u);
  auto context = Authorized();  // b checks the same token again.
  ASSERT_TRUE(stub_->Get(context.get(), request, &response).ok());
  EXPECT_EQ(response.record().payload(), "one 0");
}

class ReadRouterBudgetTest : public ReadRouterTest {
 protected:
  size_t ResponseBudgetOfA() const override { return 15; }
};

TEST_F(ReadRouterBudgetTest, MergedResponseKeepsTheResponseBudget) {
  auto context = Authorized();
  v1::MultiGetRequest request;  // Payloads of 5, 6, 5 and 6 bytes.
  for (const std::string& id : {ids1_[0], ids0_[0], ids1_[1], ids0_[1]}) request.add_ids(id);
  v1::MultiGetResponse response;
  ASSERT_TRUE(stub_->MultiGet(context.get(), request, &response).ok());
  ASSERT_EQ(response.results_size(), 4);
  EXPECT_EQ(response.results(0).record().payload(), "one 0");
  EXPECT_EQ(response.results(1).record().payload(), "zero 0");
  EXPECT_EQ(response.results(2).error().code(), grpc::StatusCode::RESOURCE_EXHAUSTED);  // 16 > 15
  EXPECT_EQ(response.results(3).error().code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
}

TEST_F(ReadRouterTest, NoLiveReplicaIsUnavailableNotNotFound) {
  auto context = Authorized();
  v1::GetRequest request;
  request.set_id(ids0_[0]);  // b does not serve partition 0 and knows no one who does.
  v1::GetResponse response;
  auto stub_b = v1::LogStore::NewStub(
      grpc::CreateChannel(b_.address, grpc::InsecureChannelCredentials()));
  const grpc::Status status = stub_b->Get(context.get(), request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE) << status.error_message();
}

TEST_F(ReadRouterTest, AFrozenReplicaIsLeftForTheNextWithinTheCallersDeadline) {
  const FrozenPeer frozen;  // f: frozen, still announced live.
  ASSERT_FALSE(frozen.address().empty());
  ASSERT_TRUE(FirstReplicaOfPartition1Is(frozen.address()));

  auto context = Authorized();
  context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
  v1::GetRequest request;
  request.set_id(ids1_[2]);
  v1::GetResponse response;
  const absl::Time start = absl::Now();
  const grpc::Status status = stub_->Get(context.get(), request, &response);
  ASSERT_TRUE(status.ok()) << status.error_code() << " " << status.error_message();
  EXPECT_EQ(response.record().payload(), "one 2");
  // One forwarding attempt (1 s by default) on f, then b: far from the caller's 20 s.
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));
  EXPECT_EQ(a_.directory->Counters().forwarded.at("Get"), 2u);

  // For a while (3 s) f is tried after b: the next read goes to b alone.
  v1::GetResponse next;
  const grpc::Status again = GetThroughA(ids1_[1], &next);
  ASSERT_TRUE(again.ok()) << again.error_code() << " " << again.error_message();
  EXPECT_EQ(next.record().payload(), "one 1");
  EXPECT_EQ(a_.directory->Counters().forwarded.at("Get"), 3u);
}


// A replica shutting down (SIGTERM) cancels the forwarded reads in flight: a sends them
// to the next replica (reads only; append_router_test: appends are not sent again).
TEST_F(ReadRouterTest, AReadCancelledByAReplicaShuttingDownGoesToTheNext) {
  const CancellingPeer cancelling;  // f: shutting down.
  ASSERT_FALSE(cancelling.address().empty());
  ASSERT_TRUE(FirstReplicaOfPartition1Is(cancelling.address()));

  v1::GetResponse response;
  const grpc::Status get = GetThroughA(ids1_[0], &response);
  ASSERT_TRUE(get.ok()) << get.error_code() << " " << get.error_message();
  EXPECT_EQ(response.record().payload(), "one 0");

  auto context = Authorized();
  v1::MultiGetRequest multi;
  multi.add_ids(ids1_[1]);
  multi.add_ids(ids0_[0]);
  v1::MultiGetResponse answers;
  const grpc::Status multi_get = stub_->MultiGet(context.get(), multi, &answers);
  ASSERT_TRUE(multi_get.ok()) << multi_get.error_message();
  ASSERT_EQ(answers.results_size(), 2);
  EXPECT_EQ(answers.results(0).record().payload(), "one 1");
  EXPECT_EQ(answers.results(1).record().payload(), "zero 0");
  EXPECT_EQ(cancelling.calls(), 1);  // The MultiGet tried b first: f cancelled lately.
}

// The only replica cancels (it is shutting down): UNAVAILABLE, retry; not CANCELLED,
// which the caller did not do.
TEST_F(ReadRouterTest, TheLastReplicaCancellingIsUnavailable) {
  const CancellingPeer cancelling;
  ASSERT_FALSE(cancelling.address().empty());
  cluster::NodeAnnouncement moved;  // b, now at the cancelling peer's address.
  moved.set_name("b");
  moved.set_address(cancelling.address());
  moved.set_unix_ms(absl::ToUnixMillis(absl::Now()) + 7'200'000);
  *moved.add_partitions() = Serving(1);
  a_.directory->ObserveAnnouncement(moved);
  ASSERT_EQ(a_.directory->Place(1).addresses, (std::vector<std::string>{cancelling.address()}));

  v1::GetResponse response;
  const grpc::Status status = GetThroughA(ids1_[0], &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE) << status.error_message();
  EXPECT_EQ(cancelling.calls(), 1);
}

// During a reassignment a's view says b serves partition 1 while b no longer does: b
// refuses the forwarded call (NotServedHere); a's caller gets UNAVAILABLE (retry), not
// b's FAILED_PRECONDITION (the caller sent no `dictlog-route: direct`).
TEST_F(ReadRouterTest, AllReplicasRefusingIsUnavailable) {
  b_.directory->SetLocal({});
  v1::GetResponse response;
  const grpc::Status status = GetThroughA(ids1_[0], &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE) << status.error_message();
}

TEST_F(ReadRouterTest, ShardMapFromTheDirectory) {
  auto context = Authorized();
  v1::ShardMap map;
  ASSERT_TRUE(stub_->GetShardMap(context.get(), {}, &map).ok());
  EXPECT_EQ(map.partitions(), 2u);
  EXPECT_EQ(map.answered_by(), "a");
  ASSERT_EQ(map.assignments_size(), 2);
  EXPECT_EQ(map.assignments(1).replicas(0).node(), "b");
  EXPECT_TRUE(map.assignments(1).replicas(0).serving());
  ASSERT_EQ(map.nodes_size(), 2);
  EXPECT_EQ(map.nodes(1).address(), b_.address);
}

}  // namespace
}  // namespace dictlog::service
