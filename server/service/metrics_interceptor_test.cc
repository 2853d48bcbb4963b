// The metrics interceptor on a real in-process DictlogServer (127.0.0.1 port 0, real
// RocksDB), called through the generated stubs.
#include "server/service/metrics_interceptor.h"

#include <grpcpp/grpcpp.h>

#include "absl/strings/match.h"
#include "common/test_dir.h"
#include "gtest/gtest.h"
#include "proto/dictlog.grpc.pb.h"
#include "server/service/dictlog_server.h"

namespace dictlog::service {
namespace {

class MetricsInterceptorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    engine::EngineOptions options;
    options.store.path = FreshTestDir();
    // Compress at append, so a record that shrinks is returned as a frame (ADR 0028
    // keeps records raw until a pool's first dictionary by default).
    options.raw_before_dictionary_bytes = 0;
    auto engine = engine::LogEngine::Open(options);
    ASSERT_TRUE(engine.ok()) << engine.status();
    engine_ = std::move(*engine);
    ServerOptions server_options;
    server_options.listen = "127.0.0.1:0";
    server_options.rpc_metrics = &metrics_;
    auto server = DictlogServer::Start(engine_.get(), server_options);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
    store_ = v1::LogStore::NewStub(
        grpc::CreateChannel("127.0.0.1:" + std::to_string(server_->port()),
                            grpc::InsecureChannelCredentials()));
  }

  grpc::Status AppendBatch(const std::vector<std::pair<std::string, std::string>>& records) {
    grpc::ClientContext context;
    v1::AppendBatchRequest request;
    for (const auto& [category, payload] : records) {
      v1::RecordToAppend* record = request.add_records();
      record->set_category(category);
      record->set_payload(payload);
    }
    v1::AppendBatchResponse response;
    return store_->AppendBatch(&context, request, &response);
  }

  std::string Rendered() const {
    metrics::TextWriter out;
    metrics_.Render(&out);
    return out.text();
  }

  metrics::RpcMetrics metrics_;  // Outlives the server.
  std::unique_ptr<engine::LogEngine> engine_;
  std::unique_ptr<DictlogServer> server_;
  std::unique_ptr<v1::LogStore::Stub> store_;
};

TEST_F(MetricsInterceptorTest, CountsSuccessfulAppendsOnly) {
  ASSERT_TRUE(AppendBatch({{"HDFS", "abc"}, {"HDFS", "defg"}, {"web", "h"}}).ok());
  // An invalid category rejects the whole batch: nothing written, nothing counted.
  EXPECT_EQ(AppendBatch({{"HDFS", "xyz"}, {"bad name", "x"}}).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  const std::string text = Rendered();
  EXPECT_TRUE(absl::StrContains(text, "dictlog_appended_records_total 3\n")) << text;
  EXPECT_TRUE(absl::StrContains(text, "dictlog_appended_bytes_total 8\n")) << text;
  EXPECT_TRUE(absl::StrContains(text,
                                "dictlog_rpcs_total{service=\"dictlog.v1.LogStore\","
                                "method=\"AppendBatch\",code=\"OK\"} 1\n"));
  EXPECT_TRUE(absl::StrContains(text,
                                "dictlog_rpcs_total{service=\"dictlog.v1.LogStore\","
                                "method=\"AppendBatch\",code=\"INVALID_ARGUMENT\"} 1\n"));
}

TEST_F(MetricsInterceptorTest, CountsRecordsReturnedByGetMultiGetAndScan) {
  ASSERT_TRUE(AppendBatch({{"HDFS", "abc"}, {"HDFS", "defg"}}).ok());
  {
    grpc::ClientContext context;
    v1::GetRequest request;
    request.set_id("HDFS/2");
    v1::GetResponse response;
    ASSERT_TRUE(store_->Get(&context, request, &response).ok());
  }
  {
    grpc::ClientContext context;
    v1::GetRequest request;
    request.set_id("HDFS/9");
    v1::GetResponse response;
    EXPECT_EQ(store_->Get(&context, request, &response).error_code(),
              grpc::StatusCode::NOT_FOUND);
  }
  {
    grpc::ClientContext context;
    v1::MultiGetRequest request;
    request.add_ids("HDFS/1");
    request.add_ids("HDFS/7");  // A per-id error: not a record read.
    v1::MultiGetResponse response;
    ASSERT_TRUE(store_->MultiGet(&context, request, &response).ok());
  }
  {
    grpc::ClientContext context;
    v1::ScanRequest request;
    request.set_pool("HDFS");
    auto reader = store_->Scan(&context, request);
    v1::ScanResponse response;
    while (reader->Read(&response)) {
    }
    ASSERT_TRUE(reader->Finish().ok());
  }
  const std::string text = Rendered();
  // Get 1 (4 bytes) + MultiGet 1 (3) + Scan 2 (7).
  EXPECT_TRUE(absl::StrContains(text, "dictlog_read_records_total 4\n")) << text;
  EXPECT_TRUE(absl::StrContains(text, "dictlog_read_bytes_total 14\n")) << text;
  EXPECT_TRUE(absl::StrContains(text,
                                "dictlog_rpcs_total{service=\"dictlog.v1.LogStore\","
                                "method=\"Get\",code=\"NOT_FOUND\"} 1\n"));
  // The MultiGet's missing id, counted by its own code; the Get's error is the call's.
  EXPECT_TRUE(absl::StrContains(text,
                                "dictlog_read_errors_total{service=\"dictlog.v1.LogStore\","
                                "method=\"MultiGet\",code=\"NOT_FOUND\"} 1\n"))
      << text;
  EXPECT_FALSE(absl::StrContains(text, "dictlog_read_errors_total{service=\"dictlog.v1."
                                       "LogStore\",method=\"Get\""));
  EXPECT_TRUE(absl::StrContains(text,
                                "dictlog_rpc_duration_seconds_count{service=\"dictlog.v1."
                                "LogStore\",method=\"Scan\",code=\"OK\"} 1\n"));
}

TEST_F(MetricsInterceptorTest, CountsRecordsReturnedAsFrames) {
  // 200 bytes that compress: stored as a frame; 4 that do not: stored raw.
  ASSERT_TRUE(AppendBatch({{"HDFS", std::string(200, 'a')}, {"HDFS", "defg"}}).ok());
  {
    grpc::ClientContext context;
    v1::GetRequest request;
    request.set_id("HDFS/1");
    v1::GetFrameResponse response;
    ASSERT_TRUE(store_->GetFrame(&context, request, &response).ok());
  }
  {
    grpc::ClientContext context;
    v1::MultiGetFramesRequest request;
    request.add_ids("HDFS/1");  // A frame.
    request.add_ids("HDFS/2");  // A payload.
    request.add_ids("HDFS/9");  // A per-id error: not a record read.
    v1::MultiGetFramesResponse response;
    ASSERT_TRUE(store_->MultiGetFrames(&context, request, &response).ok());
    ASSERT_EQ(response.results(0).record().content_case(), v1::RecordFrame::kFrame);
  }
  {
    grpc::ClientContext context;
    v1::MultiGetFramesRequest request;
    request.add_ids("HDFS/9");
    request.add_ids("HDFS/2");
    request.add_ids("HDFS/1");
    request.set_packed(true);  // The same, packed: counted the same.
    v1::MultiGetFramesResponse response;
    ASSERT_TRUE(store_->MultiGetFrames(&context, request, &response).ok());
    ASSERT_EQ(response.packed().sizes_size(), 2);
  }
  {
    grpc::ClientContext context;
    v1::ScanRequest request;
    request.set_pool("HDFS");
    request.set_frames(true);
    auto reader = store_->Scan(&context, request);
    v1::ScanResponse response;
    while (reader->Read(&response)) {
    }
    ASSERT_TRUE(reader->Finish().ok());
  }
  const std::string text = Rendered();
  // GetFrame 1 (200 bytes) + MultiGetFrames 2 + 2 (204 each) + Scan 2 (204): payload
  // bytes.
  EXPECT_TRUE(absl::StrContains(text, "dictlog_read_records_total 7\n")) << text;
  EXPECT_TRUE(absl::StrContains(text, "dictlog_read_bytes_total 812\n")) << text;
  EXPECT_TRUE(absl::StrContains(text,
                                "dictlog_rpcs_total{service=\"dictlog.v1.LogStore\","
                                "method=\"MultiGetFrames\",code=\"OK\"} 2\n"));
  // HDFS/9 in both calls: in the results, then in the packed errors.
  EXPECT_TRUE(absl::StrContains(text,
                                "dictlog_read_errors_total{service=\"dictlog.v1.LogStore\","
                                "method=\"MultiGetFrames\",code=\"NOT_FOUND\"} 2\n"))
      << text;
}

}  // namespace
}  // namespace dictlog::service
