// End to end: bearer tokens and roles against the real dictlogd (127.0.0.1 port 0,
// --tokens_file), through the client library; every Admin and LogStore method is
// also called through a generic stub, so a method added later without a check fails
// here.
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include <filesystem>
#include <fstream>
#include <future>
#include <memory>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "client/client.h"
#include "proto/dictlog.pb.h"
#include "tests/e2e/server_process.h"

namespace dictlog {
namespace {

using ::testing::HasSubstr;

constexpr char kReader[] = "reader-token-0123456789";
constexpr char kWriter[] = "writer-token-0123456789";
constexpr char kAdmin[] = "admin-token-0123456789";  // stored hashed in the file
constexpr char kWebWriter[] = "web-writer-0123456789";
constexpr char kWebReader[] = "web-reader-0123456789";

constexpr char kTokensFile[] =
    "# test tokens\n"
    "reader-token-0123456789 reader\n"
    "writer-token-0123456789 writer\n"
    "sha256:ca8d40e6ce4716b552f1c69863335b502f2afb57ffae171d6675fd56d91ca5b2 admin\n"
    "web-writer-0123456789 writer web*\n"
    "web-reader-0123456789 reader web*,api\n";

class AuthTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const std::string dir = std::string(std::getenv("TEST_TMPDIR")) + "/auth";
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    std::ofstream(dir + "/tokens") << kTokensFile;
    server_ = new testing::ServerProcess(
        testing::RunfilePath("server/daemon/dictlogd"), dir + "/data",
        {"--tokens_file=" + dir + "/tokens", "--auto_train=false"});
    absl::StatusOr<std::string> address = server_->Start();
    ASSERT_TRUE(address.ok()) << address.status();
    const client::Client admin = Connect(kAdmin);
    for (const char* category : {"HDFS", "HDFS", "web.a", "web.a"}) {
      absl::StatusOr<std::string> id = admin.Append(category, "seed record");
      ASSERT_TRUE(id.ok()) << id.status();
      (std::string(category) == "HDFS" ? hdfs_id_ : web_id_) = *id;
    }
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }

  static client::Client Connect(const std::string& token) {
    client::ClientOptions options;
    options.server = server_->address();
    options.timeout = absl::Seconds(20);
    options.security.token = token;
    return client::Client(options);
  }

  // Records in all pools, read with the admin token.
  static int64_t TotalRecords() {
    absl::StatusOr<std::vector<v1::PoolInfo>> pools = Connect(kAdmin).ListPools();
    EXPECT_TRUE(pools.ok()) << pools.status();
    int64_t total = 0;
    for (const v1::PoolInfo& pool : pools.value_or(std::vector<v1::PoolInfo>{})) {
      total += static_cast<int64_t>(pool.stats().records());
    }
    return total;
  }

  // Calls `method` (/package.Service/Method) with an empty request through a generic
  // stub; returns its status.
  static grpc::Status CallGeneric(const std::string& method, const std::string& token) {
    std::shared_ptr<grpc::Channel> channel =
        grpc::CreateChannel(server_->address(), grpc::InsecureChannelCredentials());
    grpc::GenericStub stub(channel);
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(20)));
    if (!token.empty()) context.AddMetadata("authorization", "Bearer " + token);
    grpc::Slice empty("");  // An empty message: every request's fields at defaults.
    grpc::ByteBuffer request(&empty, 1), response;
    std::promise<grpc::Status> done;
    stub.UnaryCall(&context, method, grpc::StubOptions(), &request, &response,
                   [&done](grpc::Status status) { done.set_value(std::move(status)); });
    return done.get_future().get();
  }

  // "/dictlog.v1.Service/Method" for every method of `service`.
  static std::vector<std::string> Methods(const std::string& service) {
    const google::protobuf::ServiceDescriptor* descriptor =
        v1::AppendRequest::descriptor()->file()->FindServiceByName(service);
    std::vector<std::string> methods;
    for (int i = 0; i < descriptor->method_count(); ++i) {
      methods.push_back("/" + descriptor->full_name() + "/" + descriptor->method(i)->name());
    }
    return methods;
  }

  static testing::ServerProcess* server_;
  static std::string hdfs_id_;
  static std::string web_id_;
};

testing::ServerProcess* AuthTest::server_ = nullptr;
std::string AuthTest::hdfs_id_;
std::string AuthTest::web_id_;

TEST_F(AuthTest, MissingOrUnknownTokenIsUnauthenticatedOnEveryMethod) {
  const int64_t before = TotalRecords();
  std::vector<std::string> methods = Methods("LogStore");
  for (const std::string& admin : Methods("Admin")) methods.push_back(admin);
  ASSERT_GE(methods.size(), 19u);
  for (const std::string& method : methods) {
    for (const std::string token : {"", "not-a-known-token-0123"}) {
      const grpc::Status status = CallGeneric(method, token);
      EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED)
          << method << " token \"" << token << "\": " << status.error_message();
    }
  }
  const absl::StatusOr<std::string> appended = Connect("").Append("HDFS", "x");
  EXPECT_EQ(appended.status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_THAT(appended.status().message(), HasSubstr("bearer token"));
  EXPECT_EQ(TotalRecords(), before);
}

TEST_F(AuthTest, ReaderReadsButCannotAppendOrAdminister) {
  const client::Client reader = Connect(kReader);
  absl::StatusOr<v1::Record> record = reader.Get(hdfs_id_);
  ASSERT_TRUE(record.ok()) << record.status();
  EXPECT_EQ(record->payload(), "seed record");
  EXPECT_TRUE(reader.GetFrame(web_id_).ok());
  auto results = reader.MultiGet({hdfs_id_, web_id_});
  ASSERT_TRUE(results.ok()) << results.status();
  EXPECT_TRUE((*results)[0].ok() && (*results)[1].ok());
  v1::ScanRequest scan;
  scan.set_pool("HDFS");
  int scanned = 0;
  EXPECT_TRUE(reader.Scan(scan, [&](const v1::Record&) { ++scanned; return absl::OkStatus(); }).ok());
  EXPECT_GE(scanned, 2);

  const int64_t before = TotalRecords();
  const absl::StatusOr<std::string> appended = reader.Append("HDFS", "no");
  EXPECT_EQ(appended.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(appended.status().message(), HasSubstr("writer role"));
  v1::RecordToAppend batch_record;
  batch_record.set_category("HDFS");
  batch_record.set_payload("no");
  EXPECT_EQ(reader.AppendBatch({batch_record}).status().code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(reader.ListPools().status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(TotalRecords(), before);
}

TEST_F(AuthTest, WriterAppendsButEveryAdminMethodIsDenied) {
  const int64_t before = TotalRecords();
  EXPECT_TRUE(Connect(kWriter).Append("HDFS", "from the writer").ok());
  EXPECT_EQ(TotalRecords(), before + 1);
  for (const std::string& method : Methods("Admin")) {
    // GetDictionary serves readers of a whole pool (clients decoding frames; its own
    // rules are in frames_scope_e2e_test): "no dictionary 0" here.
    if (method == "/dictlog.v1.Admin/GetDictionary") continue;
    const grpc::Status status = CallGeneric(method, kWriter);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED)
        << method << ": " << status.error_message();
    EXPECT_THAT(status.error_message(), HasSubstr("needs the admin role")) << method;
  }
  v1::PoolOptions options;
  EXPECT_EQ(Connect(kWriter).CreatePool("writer-pool", options).status().code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(Connect(kAdmin).GetPool("writer-pool").status().code(),
            absl::StatusCode::kNotFound);
}

TEST_F(AuthTest, AdminAdministers) {
  v1::PoolOptions options;
  absl::StatusOr<v1::PoolInfo> pool = Connect(kAdmin).CreatePool("admin-pool", options);
  ASSERT_TRUE(pool.ok()) << pool.status();
  EXPECT_TRUE(Connect(kAdmin).GetPool("admin-pool").ok());
}

TEST_F(AuthTest, CategoryLimitedWriterWritesNothingOutsideItsCategories) {
  const client::Client web = Connect(kWebWriter);
  EXPECT_TRUE(web.Append("web.b", "allowed").ok());
  const int64_t before = TotalRecords();
  const absl::StatusOr<std::string> hdfs = web.Append("HDFS", "denied");
  EXPECT_EQ(hdfs.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(hdfs.status().message(), HasSubstr("\"HDFS\""));
  // One forbidden record refuses the whole batch: the allowed one is not written either.
  std::vector<v1::RecordToAppend> batch(2);
  batch[0].set_category("web.b");
  batch[0].set_payload("allowed alone");
  batch[1].set_category("HDFS");
  batch[1].set_payload("denied");
  EXPECT_EQ(web.AppendBatch(batch).status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(TotalRecords(), before);
}

TEST_F(AuthTest, CategoryLimitedReaderSeesOnlyItsCategories) {
  const client::Client web = Connect(kWebReader);
  EXPECT_TRUE(web.Get(web_id_).ok());
  absl::StatusOr<v1::Record> hdfs = web.Get(hdfs_id_);
  EXPECT_EQ(hdfs.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(web.GetFrame(hdfs_id_).status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_TRUE(web.GetFrame(web_id_).ok());

  auto results = web.MultiGet({web_id_, hdfs_id_});
  ASSERT_TRUE(results.ok()) << results.status();
  ASSERT_EQ(results->size(), 2u);
  EXPECT_TRUE((*results)[0].ok());
  EXPECT_EQ((*results)[1].status().code(), absl::StatusCode::kNotFound);

  v1::ScanRequest scan;
  scan.set_category("web.a");
  int scanned = 0;
  EXPECT_TRUE(web.Scan(scan, [&](const v1::Record& r) {
                   EXPECT_EQ(r.category(), "web.a");
                   ++scanned;
                   return absl::OkStatus();
                 }).ok());
  EXPECT_EQ(scanned, 2);
  const auto ignore = [](const v1::Record&) { return absl::OkStatus(); };
  scan.set_category("HDFS");
  EXPECT_EQ(web.Scan(scan, ignore).code(), absl::StatusCode::kPermissionDenied);
  scan.set_pool("web.a");
  EXPECT_EQ(web.Scan(scan, ignore).code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(web.Append("web.a", "reader").status().code(),
            absl::StatusCode::kPermissionDenied);
}

// Issue 16 item 5: a limited reader cannot tell a record of a category it may not
// read from an absent record or pool, and learns no category or pool name.
TEST_F(AuthTest, CategoryLimitedReaderCannotTellForbiddenFromAbsent) {
  const client::Client web = Connect(kWebReader);
  const std::string absent_record = "HDFS/999999";
  const std::string absent_pool = "no-such-pool/1";
  for (const std::string& id : {hdfs_id_, absent_record, absent_pool}) {
    const absl::Status get = web.Get(id).status();
    EXPECT_EQ(get, absl::NotFoundError("no record " + id)) << id;
    auto results = web.MultiGet({id});
    ASSERT_TRUE(results.ok()) << results.status();
    EXPECT_EQ((*results)[0].status(), absl::NotFoundError("no record " + id)) << id;
  }
  const absl::Status frame = web.GetFrame(hdfs_id_).status();
  EXPECT_EQ(frame.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(web.GetFrame(absent_record).status(), frame);
  EXPECT_EQ(web.GetFrame(absent_pool).status(), frame);
  EXPECT_THAT(std::string(frame.message()), ::testing::Not(HasSubstr("HDFS")));
  // A category it may read but nobody wrote: an empty scan, not "no pool '...'".
  v1::ScanRequest scan;
  scan.set_category("web.never-written");
  int scanned = 0;
  EXPECT_TRUE(web.Scan(scan, [&](const v1::Record&) { ++scanned; return absl::OkStatus(); }).ok());
  EXPECT_EQ(scanned, 0);
  // Unlimited tokens keep the precise answers.
  EXPECT_EQ(Connect(kReader).Get(absent_pool).status(),
            absl::NotFoundError("no pool 'no-such-pool'"));
  EXPECT_EQ(Connect(kReader).Scan(scan, [](const v1::Record&) { return absl::OkStatus(); }).code(),
            absl::StatusCode::kNotFound);
}

// Issue 16 item 10: request ids are scoped per token.
TEST_F(AuthTest, ARequestIdOfOneTokenIsNotAnothersToClaimOrProbe) {
  const client::Client writer = Connect(kWriter);
  const client::Client admin = Connect(kAdmin);
  absl::StatusOr<std::string> first = writer.Append("HDFS", "writer's record", "shared-req");
  ASSERT_TRUE(first.ok()) << first.status();
  // The same id and record from another token: its own append, not the writer's id.
  absl::StatusOr<std::string> other = admin.Append("HDFS", "writer's record", "shared-req");
  ASSERT_TRUE(other.ok()) << other.status();
  EXPECT_NE(*other, *first);
  // Other records under the id: no ALREADY_EXISTS revealing the id is taken.
  EXPECT_TRUE(Connect(kWebWriter).Append("web.b", "probe", "shared-req").ok());
  // The writer's own retry still returns its first id.
  EXPECT_EQ(writer.Append("HDFS", "writer's record", "shared-req").value_or(""), *first);
  EXPECT_EQ(writer.Append("HDFS", "other", "shared-req").status().code(),
            absl::StatusCode::kAlreadyExists);
}

TEST_F(AuthTest, HealthNeedsNoToken) {
  const grpc::Status status = CallGeneric("/grpc.health.v1.Health/Check", "");
  EXPECT_TRUE(status.ok()) << status.error_message();
}

}  // namespace
}  // namespace dictlog
