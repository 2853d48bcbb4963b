// End-to-end through real gRPC: an in-process DictlogServer on 127.0.0.1 port 0 over
// a real RocksDB, called through the generated stubs (the wire boundary).
#include "server/service/dictlog_server.h"

#include <grpcpp/grpcpp.h>
#include <grpcpp/impl/codegen/client_unary_call.h>
#include <grpcpp/impl/codegen/sync_stream.h>


#include "absl/time/clock.h"
#include "common/test_dir.h"
#include "gtest/gtest.h"
#include "proto/dictlog.grpc.pb.h"
#include "server/service/health.grpc.pb.h"

namespace dictlog::service {
namespace {

class DictlogServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    engine::EngineOptions options;
    options.store.path = FreshTestDir();
    options.max_record_bytes = 1024;
    options.max_batch_records = 100;
    auto engine = engine::LogEngine::Open(options);
    ASSERT_TRUE(engine.ok()) << engine.status();
    engine_ = std::move(*engine);
    ServerOptions server_options;
    server_options.listen = "127.0.0.1:0";
    auto server = DictlogServer::Start(engine_.get(), server_options);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
    channel_ = grpc::CreateChannel("127.0.0.1:" + std::to_string(server_->port()),
                                   grpc::InsecureChannelCredentials());
    store_ = v1::LogStore::NewStub(channel_);
    admin_ = v1::Admin::NewStub(channel_);
  }

  grpc::Status Append(const std::string& category, const std::string& payload,
                      std::string* id = nullptr) {
    grpc::ClientContext context;
    v1::AppendRequest request;
    request.set_category(category);
    request.set_payload(payload);
    v1::AppendResponse response;
    grpc::Status status = store_->Append(&context, request, &response);
    if (id != nullptr) *id = response.id();
    return status;
  }

  int PoolCount() {
    grpc::ClientContext context;
    v1::ListPoolsResponse response;
    EXPECT_TRUE(admin_->ListPools(&context, {}, &response).ok());
    return response.pools_size();
  }

  std::unique_ptr<engine::LogEngine> engine_;
  std::unique_ptr<DictlogServer> server_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::LogStore::Stub> store_;
  std::unique_ptr<v1::Admin::Stub> admin_;
};

TEST_F(DictlogServerTest, AppendGetAndMultiGetOverTheWire) {
  std::string id;
  ASSERT_TRUE(Append("HDFS", "081109 203615 148 INFO dfs.DataNode", &id).ok());
  EXPECT_EQ(id, "HDFS/1");
  grpc::ClientContext get_context;
  v1::GetRequest get;
  get.set_id(id);
  v1::GetResponse got;
  ASSERT_TRUE(store_->Get(&get_context, get, &got).ok());
  EXPECT_EQ(got.record().payload(), "081109 203615 148 INFO dfs.DataNode");
  EXPECT_EQ(got.record().category(), "HDFS");

  grpc::ClientContext multi_context;
  v1::MultiGetRequest multi;
  multi.add_ids("HDFS/1");
  multi.add_ids("HDFS/2");
  multi.add_ids("no-slash");
  v1::MultiGetResponse results;
  ASSERT_TRUE(store_->MultiGet(&multi_context, multi, &results).ok());
  ASSERT_EQ(results.results_size(), 3);
  EXPECT_EQ(results.results(0).record().id(), "HDFS/1");
  EXPECT_EQ(results.results(1).error().code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(results.results(2).error().code(), grpc::StatusCode::INVALID_ARGUMENT);
}

TEST_F(DictlogServerTest, SingleNodeShardMapHasNoPartitions) {
  grpc::ClientContext context;
  v1::ShardMap map;
  map.set_partitions(7);  // Overwritten by the answer.
  const grpc::Status status = store_->GetShardMap(&context, {}, &map);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(map.partitions(), 0u);  // Not sharded: every call goes to this node.
  EXPECT_EQ(map.nodes_size(), 0);
  EXPECT_EQ(map.assignments_size(), 0);
}

TEST_F(DictlogServerTest, InputRulesMapToExactCodesAndStoreNothing) {
  EXPECT_EQ(Append("", "x").error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(Append(std::string(129, 'c'), "x").error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(Append("c", std::string(1025, 'x')).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);

  grpc::ClientContext batch_context;
  v1::AppendBatchRequest batch;
  for (int i = 0; i < 101; ++i) {
    v1::RecordToAppend* record = batch.add_records();
    record->set_category("c");
    record->set_payload("p");
  }
  v1::AppendBatchResponse batch_response;
  EXPECT_EQ(store_->AppendBatch(&batch_context, batch, &batch_response).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(PoolCount(), 0);

  grpc::ClientContext get_context;
  v1::GetRequest get;
  get.set_id("c/1");
  v1::GetResponse got;
  EXPECT_EQ(store_->Get(&get_context, get, &got).error_code(),
            grpc::StatusCode::NOT_FOUND);
}

TEST_F(DictlogServerTest, AppendBatchReturnsIdsInOrderAndScanStreamsThem) {
  grpc::ClientContext context;
  v1::AppendBatchRequest batch;
  for (int i = 0; i < 700; ++i) {
    v1::RecordToAppend* record = batch.add_records();
    record->set_category("s");
    record->set_payload("line " + std::to_string(i));
  }
  batch.mutable_records()->DeleteSubrange(100, 600);  // Keep the batch under the limit.
  v1::AppendBatchResponse response;
  ASSERT_TRUE(store_->AppendBatch(&context, batch, &response).ok());
  ASSERT_EQ(response.ids_size(), 100);
  EXPECT_EQ(response.ids(99), "s/100");

  grpc::ClientContext scan_context;
  v1::ScanRequest scan;
  scan.set_pool("s");
  scan.set_from_id("s/11");
  auto reader = store_->Scan(&scan_context, scan);
  v1::ScanResponse chunk;
  std::vector<std::string> payloads;
  while (reader->Read(&chunk)) {
    for (const v1::Record& record : chunk.records()) payloads.push_back(record.payload());
  }
  ASSERT_TRUE(reader->Finish().ok());
  ASSERT_EQ(payloads.size(), 90u);
  EXPECT_EQ(payloads.front(), "line 10");
}

// ScanRequest's time range reaches the engine: the records appended just now are in
// [now - 1 h, now + 1 h) and not in [now + 1 h, ...); since > until is INVALID_ARGUMENT.
TEST_F(DictlogServerTest, ScanByAppendTime) {
  ASSERT_TRUE(Append("t", "one").ok());
  ASSERT_TRUE(Append("t", "two").ok());
  const int64_t now = absl::ToUnixMillis(absl::Now());
  auto scan = [&](int64_t since, int64_t until, size_t* records) {
    grpc::ClientContext context;
    v1::ScanRequest request;
    request.set_pool("t");
    request.set_since_unix_ms(since);
    request.set_until_unix_ms(until);
    auto reader = store_->Scan(&context, request);
    v1::ScanResponse chunk;
    *records = 0;
    while (reader->Read(&chunk)) *records += chunk.records_size();
    return reader->Finish();
  };
  size_t records = 0;
  ASSERT_TRUE(scan(now - 3600000, now + 3600000, &records).ok());
  EXPECT_EQ(records, 2u);
  ASSERT_TRUE(scan(now + 3600000, now + 7200000, &records).ok());
  EXPECT_EQ(records, 0u);
  EXPECT_EQ(scan(now, now - 1, &records).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
}

TEST_F(DictlogServerTest, AdminPoolsAndDictionaryPreconditions) {
  grpc::ClientContext create_context;
  v1::CreatePoolRequest create;
  create.set_name("web");
  create.mutable_options()->set_compression_level(-3);
  v1::PoolInfo info;
  ASSERT_TRUE(admin_->CreatePool(&create_context, create, &info).ok());
  EXPECT_EQ(info.options().compression_level(), -3);
  EXPECT_EQ(info.options().dictionary_bytes(), 16384u);

  grpc::ClientContext again_context;
  EXPECT_EQ(admin_->CreatePool(&again_context, create, &info).error_code(),
            grpc::StatusCode::ALREADY_EXISTS);

  grpc::ClientContext update_context;
  v1::UpdatePoolRequest update;
  update.set_name("web");
  update.mutable_options()->set_storage_mode(v1::STORAGE_MODE_BLOCK);
  EXPECT_EQ(admin_->UpdatePool(&update_context, update, &info).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);  // Storage mode is fixed.

  grpc::ClientContext missing_context;
  v1::GetPoolRequest get;
  get.set_name("missing");
  EXPECT_EQ(admin_->GetPool(&missing_context, get, &info).error_code(),
            grpc::StatusCode::NOT_FOUND);
  grpc::ClientContext delete_missing;
  v1::DeletePoolRequest doomed;
  doomed.set_name("missing");
  v1::DeletePoolResponse deleted;
  EXPECT_EQ(admin_->DeletePool(&delete_missing, doomed, &deleted).error_code(),
            grpc::StatusCode::NOT_FOUND);

  grpc::ClientContext train_context;
  v1::TrainDictionaryRequest train;
  train.set_pool("web");  // Exists, but holds no records to train on.
  v1::TrainDictionaryResponse trained;
  EXPECT_EQ(admin_->TrainDictionary(&train_context, train, &trained).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);
}

TEST_F(DictlogServerTest, HealthCheckReportsServing) {
  auto health = grpc::health::v1::Health::NewStub(channel_);
  grpc::ClientContext context;
  grpc::health::v1::HealthCheckResponse response;
  ASSERT_TRUE(health->Check(&context, {}, &response).ok());
  EXPECT_EQ(response.status(), grpc::health::v1::HealthCheckResponse::SERVING);
}

// Sends one raw grpc.reflection.v1alpha ServerReflectionRequest and returns the raw
// bytes of the first response (Debian's gRPC ships no reflection .proto for clients).
std::string ReflectionQuery(grpc::Channel* channel, const std::string& request_bytes) {
  grpc::ClientContext context;
  const grpc::internal::RpcMethod method(
      "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
      grpc::internal::RpcMethod::BIDI_STREAMING);
  std::unique_ptr<grpc::ClientReaderWriter<grpc::ByteBuffer, grpc::ByteBuffer>> stream(
      grpc::internal::ClientReaderWriterFactory<grpc::ByteBuffer, grpc::ByteBuffer>::Create(
          channel, method, &context));
  grpc::Slice slice(request_bytes.data(), request_bytes.size());
  grpc::ByteBuffer request(&slice, 1);
  grpc::ByteBuffer reply;
  std::vector<grpc::Slice> slices;
  std::string bytes;
  if (stream->Write(request) && stream->WritesDone() && stream->Read(&reply) &&
      reply.Dump(&slices).ok()) {
    for (const grpc::Slice& s : slices) {
      bytes.append(reinterpret_cast<const char*>(s.begin()), s.size());
    }
  }
  stream->Finish();
  return bytes;
}

TEST_F(DictlogServerTest, ReflectionListsTheServices) {
  // ServerReflectionRequest{list_services: ""} is field 7.
  const std::string bytes = ReflectionQuery(channel_.get(), std::string("\x3a\x00", 2));
  EXPECT_NE(bytes.find("dictlog.v1.LogStore"), std::string::npos);
  EXPECT_NE(bytes.find("dictlog.v1.Admin"), std::string::npos);
  EXPECT_NE(bytes.find("grpc.health.v1.Health"), std::string::npos);
}

TEST_F(DictlogServerTest, ReflectionDescribesTheHealthService) {
  // ServerReflectionRequest{file_containing_symbol: "grpc.health.v1.Health"}: field 4.
  const std::string symbol = "grpc.health.v1.Health";
  const std::string bytes = ReflectionQuery(
      channel_.get(), std::string{0x22, static_cast<char>(symbol.size())} + symbol);
  // A file descriptor came back (not an error response) naming the Check method.
  EXPECT_NE(bytes.find("HealthCheckRequest"), std::string::npos);
  EXPECT_NE(bytes.find("Check"), std::string::npos);
}

TEST(DictlogServerStartTest, UnbindableAddressIsUnavailable) {
  engine::EngineOptions options;
  options.store.path = FreshTestDir();
  auto engine = engine::LogEngine::Open(options);
  ASSERT_TRUE(engine.ok());
  ServerOptions server_options;
  server_options.listen = "127.0.0.1:0";
  auto first = DictlogServer::Start(engine->get(), server_options);
  ASSERT_TRUE(first.ok());
  server_options.listen = "127.0.0.1:" + std::to_string((*first)->port());
  EXPECT_EQ(DictlogServer::Start(engine->get(), server_options).status().code(),
            absl::StatusCode::kUnavailable);
}

TEST(DictlogServerAuthTest, OptionsAuthorizerGuardsBothServices) {
  engine::EngineOptions options;
  options.store.path = FreshTestDir();
  auto engine = engine::LogEngine::Open(options);
  ASSERT_TRUE(engine.ok());
  auto entries = auth::ParseTokenFile("writer-token-0123456789 writer\n");
  ASSERT_TRUE(entries.ok());
  const auth::Authorizer authorizer(*std::move(entries));
  ServerOptions server_options;
  server_options.listen = "127.0.0.1:0";
  server_options.authorizer = &authorizer;
  auto server = DictlogServer::Start(engine->get(), server_options);
  ASSERT_TRUE(server.ok()) << server.status();
  auto channel = grpc::CreateChannel("127.0.0.1:" + std::to_string((*server)->port()),
                                     grpc::InsecureChannelCredentials());
  auto store = v1::LogStore::NewStub(channel);
  auto admin = v1::Admin::NewStub(channel);
  v1::AppendRequest request;
  request.set_category("HDFS");
  request.set_payload("x");
  v1::AppendResponse response;
  grpc::ClientContext anonymous;
  EXPECT_EQ(store->Append(&anonymous, request, &response).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
  grpc::ClientContext writer;
  writer.AddMetadata("authorization", "Bearer writer-token-0123456789");
  EXPECT_TRUE(store->Append(&writer, request, &response).ok());
  grpc::ClientContext writer_on_admin;
  writer_on_admin.AddMetadata("authorization", "Bearer writer-token-0123456789");
  v1::ListPoolsResponse pools;
  EXPECT_EQ(admin->ListPools(&writer_on_admin, {}, &pools).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  // Deleting a pool needs the admin role: the writer's call deletes nothing.
  grpc::ClientContext writer_delete;
  writer_delete.AddMetadata("authorization", "Bearer writer-token-0123456789");
  v1::DeletePoolRequest doomed;
  doomed.set_name("HDFS");
  v1::DeletePoolResponse deleted;
  EXPECT_EQ(admin->DeletePool(&writer_delete, doomed, &deleted).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_TRUE((*engine)->GetPool("HDFS").ok());
}

grpc::health::v1::HealthCheckResponse::ServingStatus HealthOf(grpc::Channel* channel) {
  auto health = grpc::health::v1::Health::NewStub(
      std::shared_ptr<grpc::Channel>(channel, [](grpc::Channel*) {}));
  grpc::ClientContext context;
  grpc::health::v1::HealthCheckResponse response;
  EXPECT_TRUE(health->Check(&context, {}, &response).ok());
  return response.status();
}

TEST(DictlogServerOpeningTest, UnavailableAndNotServingUntilTheEngineIsSet) {
  ServerOptions options;
  options.listen = "127.0.0.1:0";
  auto server = DictlogServer::Start(nullptr, options);
  ASSERT_TRUE(server.ok()) << server.status();
  auto channel = grpc::CreateChannel("127.0.0.1:" + std::to_string((*server)->port()),
                                     grpc::InsecureChannelCredentials());
  auto store = v1::LogStore::NewStub(channel);
  auto admin = v1::Admin::NewStub(channel);
  EXPECT_EQ(HealthOf(channel.get()), grpc::health::v1::HealthCheckResponse::NOT_SERVING);
  {
    grpc::ClientContext context;
    v1::AppendRequest request;
    request.set_category("HDFS");
    request.set_payload("early");
    v1::AppendResponse response;
    EXPECT_EQ(store->Append(&context, request, &response).error_code(),
              grpc::StatusCode::UNAVAILABLE);
  }
  {
    grpc::ClientContext context;
    v1::BackupResponse response;
    EXPECT_EQ(admin->Backup(&context, {}, &response).error_code(),
              grpc::StatusCode::UNAVAILABLE);
  }

  engine::EngineOptions engine_options;
  engine_options.store.path = FreshTestDir();
  auto engine = engine::LogEngine::Open(engine_options);
  ASSERT_TRUE(engine.ok()) << engine.status();
  (*server)->SetEngine(engine->get());
  EXPECT_EQ(HealthOf(channel.get()), grpc::health::v1::HealthCheckResponse::SERVING);
  grpc::ClientContext context;
  v1::AppendRequest request;
  request.set_category("HDFS");
  request.set_payload("on time");
  v1::AppendResponse response;
  ASSERT_TRUE(store->Append(&context, request, &response).ok());
  EXPECT_EQ(response.id(), "HDFS/1");  // The refused append wrote nothing.

  (*server)->Shutdown(absl::ZeroDuration());
  (*server)->Wait();
  // The server (whose destructor shuts down again, ending the engine's Follows) goes
  // before the engine it borrows, declared after it.
  server->reset();
}

}  // namespace
}  // namespace dictlog::service

namespace dictlog::service {
namespace {

// The first step of a graceful shutdown: health says NOT_SERVING, calls still work.
TEST(DictlogServerShutdownTest, ReportNotServingKeepsServingCalls) {
  engine::EngineOptions options;
  options.store.path = FreshTestDir();
  auto engine = engine::LogEngine::Open(options);
  ASSERT_TRUE(engine.ok()) << engine.status();
  ServerOptions server_options;
  server_options.listen = "127.0.0.1:0";
  auto server = DictlogServer::Start(engine->get(), server_options);
  ASSERT_TRUE(server.ok()) << server.status();
  auto channel = grpc::CreateChannel("127.0.0.1:" + std::to_string((*server)->port()),
                                     grpc::InsecureChannelCredentials());
  (*server)->ReportNotServing();
  auto health = grpc::health::v1::Health::NewStub(channel);
  grpc::ClientContext health_context;
  grpc::health::v1::HealthCheckResponse response;
  ASSERT_TRUE(health->Check(&health_context, {}, &response).ok());
  EXPECT_EQ(response.status(), grpc::health::v1::HealthCheckResponse::NOT_SERVING);
  auto store = v1::LogStore::NewStub(channel);
  grpc::ClientContext append_context;
  v1::AppendRequest request;
  request.set_category("c");
  request.set_payload("still served");
  v1::AppendResponse appended;
  EXPECT_TRUE(store->Append(&append_context, request, &appended).ok());
  EXPECT_EQ(appended.id(), "c/1");
  (*server)->Shutdown(absl::ZeroDuration());
}

}  // namespace
}  // namespace dictlog::service
