// End to end: multi-tenant limits against the real dictlogd with tokens (issue 16):
// --max_pools and --max_categories_per_pool refuse an append whole, a category-limited
// writer creates pools only for its own categories, and --isolate_scopes refuses
// routing rules that would mix token scopes in one pool.
#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "client/client.h"
#include "tests/e2e/server_process.h"

namespace dictlog {
namespace {

using ::testing::HasSubstr;
using ::testing::UnorderedElementsAre;

constexpr char kAdmin[] = "admin-token-0123456789";
constexpr char kWebWriter[] = "web-writer-0123456789";
constexpr char kTeamWriter[] = "team-writer-0123456789";

constexpr char kTokensFile[] =
    "admin-token-0123456789 admin\n"
    "web-writer-0123456789 writer web*\n"
    "team-writer-0123456789 writer team*\n";

std::string TestDir(const std::string& name) {
  const std::string dir = std::string(std::getenv("TEST_TMPDIR")) + "/" + name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/tokens") << kTokensFile;
  return dir;
}

class TenancyTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const std::string dir = TestDir("tenancy");
    server_ = new testing::ServerProcess(
        testing::RunfilePath("server/daemon/dictlogd"), dir + "/data",
        {"--tokens_file=" + dir + "/tokens", "--auto_train=false", "--max_pools=4",
         "--max_categories_per_pool=2", "--isolate_scopes", "--route=web*=web"});
    absl::StatusOr<std::string> address = server_->Start();
    ASSERT_TRUE(address.ok()) << address.status();
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

  static std::vector<v1::PoolInfo> Pools() {
    absl::StatusOr<std::vector<v1::PoolInfo>> pools = Connect(kAdmin).ListPools();
    EXPECT_TRUE(pools.ok()) << pools.status();
    return pools.value_or(std::vector<v1::PoolInfo>{});
  }

  static std::vector<std::string> PoolNames() {
    std::vector<std::string> names;
    for (const v1::PoolInfo& pool : Pools()) {
      names.push_back(pool.name());
    }
    return names;
  }

  static int64_t TotalRecords() {
    int64_t total = 0;
    for (const v1::PoolInfo& pool : Pools()) {
      total += static_cast<int64_t>(pool.stats().records());
    }
    return total;
  }

  static v1::RecordToAppend Record(const std::string& category) {
    v1::RecordToAppend record;
    record.set_category(category);
    record.set_payload("payload of " + category);
    return record;
  }

  static testing::ServerProcess* server_;
};

testing::ServerProcess* TenancyTest::server_ = nullptr;

// One test: the pool count is shared state of the server.
TEST_F(TenancyTest, CapsRefuseWholeAppendsAndLimitedWritersCreateOnlyTheirPools) {
  const client::Client web = Connect(kWebWriter);
  const client::Client team = Connect(kTeamWriter);
  const client::Client admin = Connect(kAdmin);
  // A limited writer cannot create a pool for a category it may not write.
  EXPECT_EQ(team.Append("other", "x").status().code(), absl::StatusCode::kPermissionDenied);
  ASSERT_TRUE(team.Append("team.a", "x").ok());  // Its own category: its own pool.
  ASSERT_TRUE(web.AppendBatch({Record("web.1"), Record("web.2")}).ok());
  EXPECT_THAT(PoolNames(), UnorderedElementsAre("team.a", "web"));

  // --max_categories_per_pool=2: a batch with one more category writes nothing.
  int64_t before = TotalRecords();
  absl::StatusOr<std::vector<std::string>> refused =
      web.AppendBatch({Record("web.1"), Record("web.3")});
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(refused.status().message()), HasSubstr("--max_categories_per_pool"));
  EXPECT_EQ(TotalRecords(), before);
  absl::StatusOr<v1::PoolInfo> web_pool = admin.GetPool("web");
  ASSERT_TRUE(web_pool.ok()) << web_pool.status();
  EXPECT_THAT(web_pool->categories(), UnorderedElementsAre("web.1", "web.2"));

  // --max_pools=4: two more pools fit, then appends and CreatePool are refused whole.
  ASSERT_TRUE(team.Append("team.b", "x").ok());
  ASSERT_TRUE(admin.CreatePool("admin-pool", {}).ok());
  before = TotalRecords();
  refused = team.AppendBatch({Record("team.a"), Record("team.c")});
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(refused.status().message()), HasSubstr("--max_pools"));
  EXPECT_EQ(admin.CreatePool("one-more", {}).status().code(),
            absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(TotalRecords(), before);
  EXPECT_THAT(PoolNames(), UnorderedElementsAre("admin-pool", "team.a", "team.b", "web"));
  EXPECT_TRUE(team.Append("team.a", "existing pools still take records").ok());
}

// --isolate_scopes at start-up: rules that would mix scopes stop dictlogd.
TEST(IsolateScopesStartupTest, RoutesMixingTokenScopesAreRefused) {
  const std::string dir = TestDir("isolation-startup");
  for (const std::vector<std::string>& flags : std::vector<std::vector<std::string>>{
           {"--tokens_file=" + dir + "/tokens", "--isolate_scopes",
            "--route=web*=shared,team*=shared"},
           {"--isolate_scopes"}}) {  // No tokens: no scopes to isolate.
    testing::ServerProcess server(testing::RunfilePath("server/daemon/dictlogd"),
                                  dir + "/data", flags);
    absl::StatusOr<std::string> address = server.Start();
    EXPECT_FALSE(address.ok()) << flags.back();
    EXPECT_THAT(std::string(address.status().message()), HasSubstr("exited early"));
  }
}

}  // namespace
}  // namespace dictlog
