// Client routing (shard_router.h, routed_reads.cc, by_partition.h) against fake nodes:
// real gRPC servers on 127.0.0.1 port 0, each answering GetShardMap with a map the test
// builds and reads (and follows) of the partitions it serves; a `dictlog-route:
// direct` read of another partition is answered FAILED_PRECONDITION with a
// NotServedHere in an RpcStatus, as the server side does (proto/dictlog.proto
// "Routing").
#include "client/shard_router.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "client/client.h"
#include "client/grpc_status.h"
#include "common/pool_partition.h"
#include "gtest/gtest.h"

namespace dictlog::client {
namespace {

constexpr uint32_t kPartitions = 3;

// A pool of partition `p` (of kPartitions), distinct per `k`.
std::string PoolOf(uint32_t p, int k = 0) {
  for (int i = 0;; ++i) {
    std::string pool = absl::StrCat("pool", i);
    if (PoolPartition(pool, kPartitions) == p && k-- == 0) return pool;
  }
}

class FakeNode final : public v1::LogStore::Service {
 public:
  FakeNode(std::string name, std::set<uint32_t> serves)
      : name_(std::move(name)), serves_(std::move(serves)) {
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port_);
    builder.RegisterService(this);
    server_ = builder.BuildAndStart();
  }
  ~FakeNode() override { Stop(); }

  void Stop() {
    if (server_ != nullptr) server_->Shutdown();
  }
  const std::string& name() const { return name_; }
  std::string address() const { return absl::StrCat("127.0.0.1:", port_); }

  // GetShardMap answers maps[min(call, size - 1)]; none: UNIMPLEMENTED.
  void SetMaps(std::vector<v1::ShardMap> maps) {
    absl::MutexLock lock(&mu_);
    maps_ = std::move(maps);
  }
  int map_calls() const { absl::MutexLock lock(&mu_); return map_calls_; }
  // Ids answered (direct or not) and refused.
  std::vector<std::string> direct_ids() const { absl::MutexLock lock(&mu_); return direct_; }
  std::vector<std::string> undirected_ids() const {
    absl::MutexLock lock(&mu_);
    return undirected_;
  }
  int refused() const { absl::MutexLock lock(&mu_); return refused_; }

  grpc::Status GetShardMap(grpc::ServerContext*, const v1::GetShardMapRequest*,
                           v1::ShardMap* out) override {
    absl::MutexLock lock(&mu_);
    const int call = map_calls_++;
    if (maps_.empty()) return grpc::Status(grpc::StatusCode::UNIMPLEMENTED, "no GetShardMap");
    *out = maps_[std::min<size_t>(call, maps_.size() - 1)];
    return grpc::Status::OK;
  }
  grpc::Status Get(grpc::ServerContext* context, const v1::GetRequest* request,
                   v1::GetResponse* out) override {
    grpc::Status status = Admit(context, {request->id()});
    if (status.ok()) *out->mutable_record() = RecordOf(request->id());
    return status;
  }
  grpc::Status GetFrame(grpc::ServerContext* context, const v1::GetRequest* request,
                        v1::GetFrameResponse* out) override {
    grpc::Status status = Admit(context, {request->id()});
    if (status.ok()) out->set_id(request->id()), out->set_frame(name_);
    return status;
  }
  grpc::Status MultiGet(grpc::ServerContext* context, const v1::MultiGetRequest* request,
                        v1::MultiGetResponse* out) override {
    std::vector<std::string> ids(request->ids().begin(), request->ids().end());
    grpc::Status status = Admit(context, ids);
    if (!status.ok()) return status;
    for (const std::string& id : ids) *out->add_results()->mutable_record() = RecordOf(id);
    return status;
  }
  grpc::Status MultiGetFrames(grpc::ServerContext* context,
                              const v1::MultiGetFramesRequest* request,
                              v1::MultiGetFramesResponse* out) override {
    std::vector<std::string> ids(request->ids().begin(), request->ids().end());
    grpc::Status status = Admit(context, ids);
    if (!status.ok()) return status;
    for (const std::string& id : ids) {
      v1::RecordFrame* frame = out->add_results()->mutable_record();
      frame->set_id(id);
      frame->set_payload(name_);
    }
    return status;
  }
  grpc::Status Scan(grpc::ServerContext* context, const v1::ScanRequest* request,
                    grpc::ServerWriter<v1::ScanResponse>* writer) override {
    const std::string id = absl::StrCat(request->pool(), "/1");
    grpc::Status status = Admit(context, {id});
    if (!status.ok()) return status;
    v1::ScanResponse response;
    *response.add_records() = RecordOf(id);
    writer->Write(response);
    return status;
  }
  // A replica of a pool's records 1..6: a stream from the start sends 1..3 and fails
  // UNAVAILABLE (the node went away mid-stream); one after an id sends the rest, then
  // waits for the client's cancel.
  grpc::Status Follow(grpc::ServerContext* context, const v1::FollowRequest* request,
                      grpc::ServerWriter<v1::FollowResponse>* writer) override {
    grpc::Status status = Admit(context, {request->pool() + "/0"});
    if (!status.ok()) return status;
    {
      absl::MutexLock lock(&mu_);
      follows_.push_back(request->after_id());
    }
    const std::string& after = request->after_id();
    const int from = after.empty() ? 1 : std::stoi(after.substr(after.rfind('/') + 1)) + 1;
    const int last = after.empty() ? 3 : 6;
    for (int seq = from; seq <= last; ++seq) {
      v1::FollowResponse response;
      *response.add_records() = RecordOf(absl::StrCat(request->pool(), "/", seq));
      writer->Write(response);
    }
    if (after.empty()) return grpc::Status(grpc::StatusCode::UNAVAILABLE, "went away");
    absl::MutexLock lock(&mu_);
    static const bool kNever = false;  // Waits for the cancel, looking every 10 ms.
    while (!context->IsCancelled()) {
      mu_.AwaitWithTimeout(absl::Condition(&kNever), absl::Milliseconds(10));
    }
    return grpc::Status(grpc::StatusCode::CANCELLED, "cancelled");
  }
  // The after_id of each Follow this node streamed.
  std::vector<std::string> follows() const { absl::MutexLock lock(&mu_); return follows_; }

 private:
  // Counts the read; refuses a direct one naming a partition not served here. A frozen
  // node (a SIGSTOPped one) answers nothing before the call's deadline.
  grpc::Status Admit(grpc::ServerContext* context, const std::vector<std::string>& ids) {
    auto header = context->client_metadata().find(kRouteHeader);
    const bool direct = header != context->client_metadata().end() &&
                        header->second == grpc::string_ref(kRouteDirect);
    absl::MutexLock lock(&mu_);
    if (cancelling_) return grpc::Status(grpc::StatusCode::CANCELLED, "shutting down");
    if (frozen_) {
      ++frozen_calls_;
      auto thawed = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return !frozen_; };
      mu_.AwaitWithDeadline(absl::Condition(&thawed), absl::FromChrono(context->deadline()));
      return grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED, "frozen");
    }
    if (slow_for_ > absl::ZeroDuration()) {  // Answers late, if the caller still waits.
      ++slow_calls_;
      static const bool kNever = false;
      const absl::Time answer_at = absl::Now() + slow_for_;
      const absl::Time deadline = absl::FromChrono(context->deadline());
      mu_.AwaitWithDeadline(absl::Condition(&kNever), std::min(answer_at, deadline));
      // An OK sent at the deadline would race the client's own timer (a loaded machine,
      // TSan: the OK won); past it, the client sees DEADLINE_EXCEEDED whatever is sent.
      if (deadline < answer_at) {
        return grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED, "slow");
      }
    }
    for (const std::string& id : ids) {
      const uint32_t p = PoolPartition(PoolOfId(id), kPartitions);
      if (direct && !serves_.count(p)) {
        ++refused_;
        v1::NotServedHere detail;
        detail.set_partition(p);
        for (const std::string& address : hint_) detail.add_replica_addresses(address);
        v1::RpcStatus rpc_status;
        rpc_status.set_code(grpc::StatusCode::FAILED_PRECONDITION);
        rpc_status.set_message("not served here");
        v1::TypedDetail* typed = rpc_status.add_details();
        typed->set_type_url(kNotServedHereType);
        typed->set_value(detail.SerializeAsString());
        return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, "not served here",
                            rpc_status.SerializeAsString());
      }
    }
    std::vector<std::string>& log = direct ? direct_ : undirected_;
    log.insert(log.end(), ids.begin(), ids.end());
    return grpc::Status::OK;
  }
  v1::Record RecordOf(const std::string& id) const {
    v1::Record record;
    record.set_id(id);
    record.set_payload(name_);  // Who answered.
    return record;
  }

 public:
  // Freeze(true): every read waits for its deadline (until Freeze(false)).
  void Freeze(bool frozen) {
    absl::MutexLock lock(&mu_);
    frozen_ = frozen;
  }
  // Cancelling(true): every read answers CANCELLED, as a node shutting down does.
  void Cancelling(bool cancelling) {
    absl::MutexLock lock(&mu_);
    cancelling_ = cancelling;
  }
  int frozen_calls() const { absl::MutexLock lock(&mu_); return frozen_calls_; }
  // SlowFor(d): every read answers d late, as a healthy node under load may.
  void SlowFor(absl::Duration d) {
    absl::MutexLock lock(&mu_);
    slow_for_ = d;
  }
  int slow_calls() const { absl::MutexLock lock(&mu_); return slow_calls_; }
  // NotServedHere.replica_addresses this node answers.
  void SetHint(std::vector<std::string> hint) {
    absl::MutexLock lock(&mu_);
    hint_ = std::move(hint);
  }

 private:
  const std::string name_;
  const std::set<uint32_t> serves_;
  int port_ = 0;
  std::unique_ptr<grpc::Server> server_;
  mutable absl::Mutex mu_;
  std::vector<v1::ShardMap> maps_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> hint_ ABSL_GUARDED_BY(mu_);
  int map_calls_ ABSL_GUARDED_BY(mu_) = 0;
  int refused_ ABSL_GUARDED_BY(mu_) = 0;
  bool frozen_ ABSL_GUARDED_BY(mu_) = false;
  bool cancelling_ ABSL_GUARDED_BY(mu_) = false;
  int frozen_calls_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Duration slow_for_ ABSL_GUARDED_BY(mu_) = absl::ZeroDuration();
  int slow_calls_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<std::string> direct_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> undirected_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> follows_ ABSL_GUARDED_BY(mu_);
};

// A map of kPartitions partitions over `nodes`; replicas[p] names the nodes (indexes)
// holding partition p, all serving and live.
v1::ShardMap MapOf(const std::vector<FakeNode*>& nodes,
                   const std::vector<std::vector<int>>& replicas, uint64_t epoch = 1) {
  v1::ShardMap map;
  map.set_partitions(kPartitions);
  map.set_epoch(epoch);
  for (FakeNode* node : nodes) {
    v1::ShardNode* n = map.add_nodes();
    n->set_name(node->name());
    n->set_address(node->address());
    n->set_live(true);
  }
  for (uint32_t p = 0; p < kPartitions; ++p) {
    v1::PartitionReplicas* assignment = map.add_assignments();
    assignment->set_partition(p);
    for (int i : replicas[p]) {
      v1::ReplicaState* replica = assignment->add_replicas();
      replica->set_node(nodes[i]->name());
      replica->set_serving(true);
    }
  }
  return map;
}

ClientOptions OptionsFor(const FakeNode& seed) {
  ClientOptions options;
  options.server = seed.address();
  options.timeout = absl::Seconds(10);
  return options;
}

bool Contains(const std::vector<std::string>& ids, const std::string& id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

// Three nodes; partition p on nodes p and p+1 (mod 3). Node 0 is the seed.
class ShardRouterTest : public ::testing::Test {
 protected:
  ShardRouterTest()
      : a_("a", {0, 2}), b_("b", {0, 1}), c_("c", {1, 2}) {
    a_.SetMaps({MapOf(nodes(), {{0, 1}, {1, 2}, {2, 0}})});
  }
  std::vector<FakeNode*> nodes() { return {&a_, &b_, &c_}; }
  // The node names that may answer partition p.
  std::set<std::string> HoldersOf(uint32_t p) {
    return {nodes()[p]->name(), nodes()[(p + 1) % 3]->name()};
  }

  FakeNode a_, b_, c_;
};

TEST_F(ShardRouterTest, MultiGetSplitsByPartitionAndMergesInRequestOrder) {
  Client client(OptionsFor(a_));
  std::vector<std::string> ids;
  for (int k = 0; k < 4; ++k) {
    for (uint32_t p = 0; p < kPartitions; ++p) ids.push_back(absl::StrCat(PoolOf(p, k), "/", k + 1));
  }
  ids.push_back("no-pool");  // No '/': to the seed, which answers (or refuses) it.
  auto results = client.MultiGet(ids);
  ASSERT_TRUE(results.ok()) << results.status();
  ASSERT_EQ(results->size(), ids.size());
  for (size_t i = 0; i + 1 < ids.size(); ++i) {
    ASSERT_TRUE((*results)[i].ok()) << (*results)[i].status();
    EXPECT_EQ((*results)[i]->id(), ids[i]);
    const uint32_t p = PoolPartition(PoolOfId(ids[i]), kPartitions);
    EXPECT_TRUE(HoldersOf(p).count((*results)[i]->payload()))
        << ids[i] << " answered by " << (*results)[i]->payload();
  }
  EXPECT_EQ(results->back()->payload(), "a");
  EXPECT_TRUE(Contains(a_.undirected_ids(), "no-pool"));
  // Each node saw direct reads only of its partitions, and none was refused.
  for (FakeNode* node : nodes()) {
    EXPECT_EQ(node->refused(), 0) << node->name();
    for (const std::string& id : node->direct_ids()) {
      EXPECT_TRUE(HoldersOf(PoolPartition(PoolOfId(id), kPartitions)).count(node->name()));
    }
  }
  EXPECT_EQ(a_.map_calls(), 1);
}

TEST_F(ShardRouterTest, MultiGetFramesAndDecodeLocallySplitToo) {
  Client client(OptionsFor(a_));
  std::vector<std::string> ids = {PoolOf(1) + "/1", PoolOf(2) + "/2", PoolOf(1) + "/3"};
  for (bool packed : {false, true}) {
    ReadOptions options;
    options.packed = packed;
    auto frames = client.MultiGetFrames(ids, options);
    ASSERT_TRUE(frames.ok()) << frames.status();
    ASSERT_EQ(frames->size(), 3u);
    for (size_t i = 0; i < ids.size(); ++i) {
      EXPECT_EQ((*frames)[i]->id(), ids[i]);
      EXPECT_TRUE(HoldersOf(PoolPartition(PoolOf(i == 1 ? 2 : 1), kPartitions))
                      .count((*frames)[i]->payload()));
    }
    options.decode_locally = true;
    auto records = client.MultiGet(ids, options);  // Payloads: nothing to decode.
    ASSERT_TRUE(records.ok()) << records.status();
    EXPECT_EQ((*records)[2]->id(), ids[2]);
  }
  for (FakeNode* node : nodes()) EXPECT_EQ(node->refused(), 0);
  EXPECT_TRUE(a_.undirected_ids().empty());
}

TEST_F(ShardRouterTest, ReadsSpreadOverBothReplicas) {
  Client client(OptionsFor(a_));
  const std::string id = PoolOf(1) + "/7";  // Partition 1: nodes b and c.
  std::set<std::string> answered_by;
  for (int i = 0; i < 6; ++i) {
    auto record = client.Get(id);
    ASSERT_TRUE(record.ok()) << record.status();
    answered_by.insert(record->payload());
  }
  EXPECT_EQ(answered_by, (std::set<std::string>{"b", "c"}));
  EXPECT_EQ(b_.direct_ids().size() + c_.direct_ids().size(), 6u);
  EXPECT_GE(b_.direct_ids().size(), 2u);  // Round robin: 3 each.
  EXPECT_GE(c_.direct_ids().size(), 2u);
  EXPECT_TRUE(a_.direct_ids().empty());
}

TEST_F(ShardRouterTest, GetFrameAndScanOfAPoolAreRouted) {
  Client client(OptionsFor(a_));
  const std::string pool = PoolOf(1);  // Nodes b and c.
  auto frame = client.GetFrame(pool + "/1");
  ASSERT_TRUE(frame.ok()) << frame.status();
  EXPECT_TRUE(HoldersOf(1).count(frame->frame()));
  v1::ScanRequest scan;
  scan.set_pool(pool);
  std::vector<std::string> by;
  ASSERT_TRUE(client.Scan(scan, [&](const v1::Record& r) {
                by.push_back(r.payload());
                return absl::OkStatus();
              }).ok());
  ASSERT_EQ(by.size(), 1u);
  EXPECT_TRUE(HoldersOf(1).count(by[0]));
  EXPECT_TRUE(a_.direct_ids().empty());
  EXPECT_TRUE(a_.undirected_ids().empty());
}

// A Follow of a pool goes to a replica; when it fails mid-stream the client goes on on
// the other, after the last id it passed on: each record once, in order.
TEST_F(ShardRouterTest, FollowOfAPoolIsRoutedAndResumedOnTheOtherReplica) {
  Client client(OptionsFor(a_));
  const std::string pool = PoolOf(1);  // Nodes b and c.
  v1::FollowRequest request;
  request.set_pool(pool);
  request.set_from_start(true);
  FollowCancel cancel;
  std::vector<std::string> ids;
  const absl::Status status = client.Follow(
      request,
      [&](const v1::Record& record) {
        ids.push_back(record.id());
        if (ids.size() == 6) cancel.Cancel();
        return absl::OkStatus();
      },
      &cancel);
  EXPECT_TRUE(status.ok()) << status;
  std::vector<std::string> want;
  for (int seq = 1; seq <= 6; ++seq) want.push_back(absl::StrCat(pool, "/", seq));
  EXPECT_EQ(ids, want);
  std::vector<std::string> asked = b_.follows();
  const std::vector<std::string> on_c = c_.follows();
  asked.insert(asked.end(), on_c.begin(), on_c.end());
  std::sort(asked.begin(), asked.end());
  EXPECT_EQ(asked, (std::vector<std::string>{"", pool + "/3"}));  // One on each replica.
  EXPECT_EQ(b_.follows().size(), 1u);
  EXPECT_TRUE(a_.direct_ids().empty());
  EXPECT_TRUE(a_.undirected_ids().empty());
}

TEST_F(ShardRouterTest, NotServedHereRefreshesTheMapAndRetriesOnTheHolder) {
  // The first map puts partition 1 on node a alone, which does not serve it; the map
  // the refresh brings puts it on c.
  a_.SetMaps({MapOf(nodes(), {{0}, {0}, {2}}), MapOf(nodes(), {{0}, {2}, {2}}, 2)});
  ClientOptions options = OptionsFor(a_);
  options.shard_map_refresh_interval = absl::ZeroDuration();
  Client client(options);
  auto record = client.Get(PoolOf(1) + "/1");
  ASSERT_TRUE(record.ok()) << record.status();
  EXPECT_EQ(record->payload(), "c");
  EXPECT_EQ(a_.refused(), 1);
  EXPECT_EQ(a_.map_calls(), 2);
  EXPECT_EQ(client.ShardMapFetches(), 2);
  // The next read goes straight to c.
  ASSERT_TRUE(client.Get(PoolOf(1) + "/2").ok());
  EXPECT_EQ(a_.refused(), 1);
  EXPECT_EQ(c_.direct_ids().size(), 2u);
}

TEST_F(ShardRouterTest, RoutingStatsCountFetchesRefreshesRetargetsAndEpochs) {
  a_.SetMaps({MapOf(nodes(), {{0}, {0}, {2}}), MapOf(nodes(), {{0}, {2}, {2}}, 2)});
  ClientOptions options = OptionsFor(a_);
  options.shard_map_refresh_interval = absl::ZeroDuration();
  Client client(options);
  EXPECT_EQ(client.RoutingStats().fetches, 0);
  ASSERT_TRUE(client.Get(PoolOf(1) + "/1").ok());  // Refused by a, then read on c.
  ASSERT_TRUE(client.Get(PoolOf(1) + "/2").ok());
  const ShardRouter::Stats stats = client.RoutingStats();
  EXPECT_EQ(stats.fetches, 2);
  EXPECT_EQ(stats.refreshes_after_failure, 1);
  EXPECT_EQ(stats.retargets, 1);
  EXPECT_EQ(stats.epoch, 2u);
  EXPECT_EQ(stats.epoch_changes, 2);  // None to the first map's, then to epoch 2.
  EXPECT_EQ(Client(options).RoutingStats().fetches, 0);  // Per router.
}

TEST_F(ShardRouterTest, RateLimitedRefreshRetriesOnTheRefusalsReplica) {
  a_.SetMaps({MapOf(nodes(), {{0}, {0}, {2}})});  // Wrong for partition 1, never fixed.
  a_.SetHint({c_.address()});
  ClientOptions options = OptionsFor(a_);
  options.shard_map_refresh_interval = absl::Hours(1);
  Client client(options);
  auto record = client.Get(PoolOf(1) + "/1");
  ASSERT_TRUE(record.ok()) << record.status();
  EXPECT_EQ(record->payload(), "c");
  EXPECT_EQ(a_.map_calls(), 1);  // Within the interval: no second fetch.
}

TEST_F(ShardRouterTest, RetryGoesToTheSeedWhenNoOtherReplicaServes) {
  // Every replica refuses and nothing points elsewhere: one retry, to the seed without
  // the header (it forwards), never a loop.
  a_.SetMaps({MapOf(nodes(), {{0}, {0}, {0}})});
  ClientOptions options = OptionsFor(a_);
  options.shard_map_refresh_interval = absl::ZeroDuration();
  Client client(options);
  auto record = client.Get(PoolOf(1) + "/1");
  ASSERT_TRUE(record.ok()) << record.status();  // The seed forwards an undirected read.
  EXPECT_EQ(a_.refused(), 1);
  EXPECT_EQ(a_.undirected_ids().size(), 1u);
  EXPECT_EQ(a_.map_calls(), 2);
}

// During a reassignment both replicas of a (stale) map may refuse: the read ends on the
// seed without the header (it forwards), never FAILED_PRECONDITION to the caller.
TEST_F(ShardRouterTest, TwoRefusalsEndOnTheSeed) {
  FakeNode d("d", {});  // Serves nothing (yet).
  std::vector<FakeNode*> four = {&a_, &b_, &c_, &d};
  a_.SetMaps({MapOf(four, {{2, 3}, {1, 2}, {2, 0}})});  // Partition 0: c, d; neither serves it.
  c_.SetHint({d.address()});
  d.SetHint({c_.address()});
  Client client(OptionsFor(a_));
  auto record = client.Get(PoolOf(0) + "/1");
  ASSERT_TRUE(record.ok()) << record.status();
  EXPECT_EQ(record->payload(), "a");  // The seed serves partition 0 itself.
  EXPECT_EQ(c_.refused() + d.refused(), 2);
  EXPECT_EQ(a_.undirected_ids().size(), 1u);
}

TEST_F(ShardRouterTest, StoppedReplicaFailsOverToTheOther) {
  Client client(OptionsFor(a_));
  const std::string pool = PoolOf(1);  // Nodes b and c.
  b_.Stop();
  for (int i = 0; i < 4; ++i) {
    auto record = client.Get(absl::StrCat(pool, "/", i + 1));
    ASSERT_TRUE(record.ok()) << record.status();
    EXPECT_EQ(record->payload(), "c");
  }
  auto results = client.MultiGet({pool + "/9", PoolOf(0) + "/9"});  // Partition 0: a, b.
  ASSERT_TRUE(results.ok()) << results.status();
  EXPECT_EQ((*results)[0]->payload(), "c");
  EXPECT_EQ((*results)[1]->payload(), "a");
}

// A SIGSTOPped replica the map still shows live: the first read waits for it one attempt
// timeout (1 s), not the call's 10 s, and goes on to the other; the next reads pass it
// over.
TEST_F(ShardRouterTest, FrozenReplicaIsLeftForTheOtherWithinTheCallsDeadline) {
  Client client(OptionsFor(a_));
  const std::string pool = PoolOf(1);  // Nodes b and c.
  b_.Freeze(true);
  const absl::Time start = absl::Now();
  for (int i = 0; i < 6; ++i) {
    auto record = client.Get(absl::StrCat(pool, "/", i + 1));
    ASSERT_TRUE(record.ok()) << record.status();
    EXPECT_EQ(record->payload(), "c");
  }
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  EXPECT_EQ(b_.frozen_calls(), 1);
  b_.Freeze(false);
}

// A frozen replica the client noted, and the other slower than the attempt timeout (a
// loaded node): the read's last try goes to the seed, which forwards, not to the frozen
// one with the rest of the deadline (chaos_test saw DEADLINE_EXCEEDED so, ADR 0024).
TEST_F(ShardRouterTest, LastTryAfterASlowReplicaSkipsTheFrozenOne) {
  Client client(OptionsFor(a_));
  const std::string pool = PoolOf(1);  // Nodes b and c.
  b_.Freeze(true);
  for (int i = 0; i < 2 && b_.frozen_calls() == 0; ++i) {  // Round robin: b within 2.
    auto record = client.Get(absl::StrCat(pool, "/", i + 1));
    ASSERT_TRUE(record.ok()) << record.status();
  }
  ASSERT_EQ(b_.frozen_calls(), 1);  // Noted unresponsive for 3 s.
  c_.SlowFor(absl::Seconds(2));     // Longer than the 1 s attempt timeout.
  const absl::Time start = absl::Now();
  auto record = client.Get(pool + "/9");
  ASSERT_TRUE(record.ok()) << record.status();
  EXPECT_EQ(record->payload(), "a");  // The seed (which serves what it is sent here).
  EXPECT_EQ(c_.slow_calls(), 1);
  EXPECT_EQ(b_.frozen_calls(), 1);   // Not tried again.
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  EXPECT_TRUE(Contains(a_.undirected_ids(), pool + "/9"));
  b_.Freeze(false);
}

// A replica shutting down (SIGTERM) cancels the reads in flight: the client, which never
// cancels a unary call itself, tries the other replica.
TEST_F(ShardRouterTest, CancelledByAReplicaIsRetriedOnTheOther) {
  Client client(OptionsFor(a_));
  b_.Cancelling(true);
  for (int i = 0; i < 4; ++i) {
    auto record = client.Get(absl::StrCat(PoolOf(1), "/", i + 1));  // Nodes b and c.
    ASSERT_TRUE(record.ok()) << record.status();
    EXPECT_EQ(record->payload(), "c");
  }
}

TEST_F(ShardRouterTest, BothReplicasDownFailUnavailableAfterOneRetry) {
  Client client(OptionsFor(a_));
  b_.Stop();
  c_.Stop();
  auto record = client.Get(PoolOf(1) + "/1");  // Partition 1: b, then c; no third try.
  EXPECT_EQ(record.status().code(), absl::StatusCode::kUnavailable) << record.status();
  EXPECT_TRUE(a_.direct_ids().empty() && a_.undirected_ids().empty());
  EXPECT_EQ(a_.map_calls(), 1);  // A refresh within the 1 s interval is skipped.
}

TEST_F(ShardRouterTest, SingleNodeMapSendsEverythingToTheSeed) {
  v1::ShardMap single;
  single.set_answered_by("a");
  a_.SetMaps({single});
  Client client(OptionsFor(a_));
  std::vector<std::string> ids = {PoolOf(0) + "/1", PoolOf(1) + "/1", PoolOf(2) + "/1"};
  auto results = client.MultiGet(ids);
  ASSERT_TRUE(results.ok()) << results.status();
  for (const auto& r : *results) EXPECT_EQ(r->payload(), "a");
  EXPECT_EQ(a_.undirected_ids(), ids);  // One call, no header.
  EXPECT_TRUE(a_.direct_ids().empty());
}

TEST_F(ShardRouterTest, ServerWithoutGetShardMapGetsEverything) {
  a_.SetMaps({});  // UNIMPLEMENTED
  Client client(OptionsFor(a_));
  ASSERT_TRUE(client.Get(PoolOf(1) + "/1").ok());
  ASSERT_TRUE(client.MultiGet({PoolOf(2) + "/1", PoolOf(0) + "/1"}).ok());
  EXPECT_EQ(a_.undirected_ids().size(), 3u);
  EXPECT_EQ(a_.map_calls(), 1);  // Not asked again within the TTL.
  EXPECT_TRUE(b_.direct_ids().empty() && c_.direct_ids().empty());
}

TEST_F(ShardRouterTest, RoutingOffSendsEverythingToTheSeed) {
  ClientOptions options = OptionsFor(a_);
  options.routing = false;
  Client client(options);
  ASSERT_TRUE(client.MultiGet({PoolOf(1) + "/1", PoolOf(2) + "/1"}).ok());
  EXPECT_EQ(a_.undirected_ids().size(), 2u);
  EXPECT_EQ(a_.map_calls(), 0);
}

TEST_F(ShardRouterTest, MalformedMapsAreRefusedWithAClearError) {
  struct Case {
    const char* what;
    std::function<void(v1::ShardMap*)> spoil;
  };
  const std::vector<Case> cases = {
      {"assignments", [](v1::ShardMap* m) { m->mutable_assignments()->RemoveLast(); }},
      {"is of partition",
       [](v1::ShardMap* m) { m->mutable_assignments(1)->set_partition(7); }},
      {"not one of the map's nodes",
       [](v1::ShardMap* m) { m->mutable_assignments(0)->mutable_replicas(0)->set_node("x"); }},
      {"no replicas", [](v1::ShardMap* m) { m->mutable_assignments(2)->clear_replicas(); }},
      {"listed twice", [](v1::ShardMap* m) { *m->add_nodes() = m->nodes(0); }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    v1::ShardMap map = MapOf(nodes(), {{0, 1}, {1, 2}, {2, 0}});
    c.spoil(&map);
    a_.SetMaps({map});
    Client client(OptionsFor(a_));
    auto record = client.Get(PoolOf(1) + "/1");
    EXPECT_EQ(record.status().code(), absl::StatusCode::kDataLoss);
    EXPECT_NE(record.status().message().find(c.what), std::string::npos)
        << record.status();
    auto results = client.MultiGet({PoolOf(0) + "/1"});
    EXPECT_EQ(results.status().code(), absl::StatusCode::kDataLoss);
  }
  for (FakeNode* node : nodes()) {
    EXPECT_TRUE(node->direct_ids().empty() && node->undirected_ids().empty());
  }
}

TEST_F(ShardRouterTest, ThreadsShareOneClient) {
  Client client(OptionsFor(a_));
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) {
        std::vector<std::string> ids;
        for (uint32_t p = 0; p < kPartitions; ++p) {
          ids.push_back(absl::StrCat(PoolOf(p, t), "/", i + 1));
        }
        auto results = client.MultiGet(ids);
        if (!results.ok()) { ++wrong; continue; }
        for (size_t k = 0; k < ids.size(); ++k) {
          if (!(*results)[k].ok() || (*results)[k]->id() != ids[k]) ++wrong;
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(a_.map_calls(), 1);  // Fetched once, shared.
}

TEST(ShardTableTest, SkipsReplicasNotServingAndPrefersLiveNodes) {
  v1::ShardMap map;
  map.set_partitions(1);
  for (const char* name : {"n1", "n2", "n3"}) {
    v1::ShardNode* node = map.add_nodes();
    node->set_name(name);
    node->set_address(absl::StrCat(name, ":1"));
    node->set_live(std::string(name) != "n3");
  }
  map.mutable_nodes(1)->clear_address();  // Not announced yet.
  v1::PartitionReplicas* a = map.add_assignments();
  for (const char* name : {"n1", "n2", "n3"}) {
    v1::ReplicaState* r = a->add_replicas();
    r->set_node(name);
    r->set_serving(true);
  }
  auto table = BuildShardTable(map);
  ASSERT_TRUE(table.ok()) << table.status();
  EXPECT_EQ(table->serving[0], std::vector<std::string>{"n1:1"});
  map.mutable_assignments(0)->mutable_replicas(0)->set_serving(false);  // Building.
  table = BuildShardTable(map);
  ASSERT_TRUE(table.ok());
  EXPECT_EQ(table->serving[0], std::vector<std::string>{"n3:1"});  // Not live: last resort.
  EXPECT_EQ(PoolOfId("app/web/12"), "app/web");
  EXPECT_EQ(PoolOfId("nopool"), "");
}

}  // namespace
}  // namespace dictlog::client
