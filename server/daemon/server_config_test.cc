#include "server/daemon/server_config.h"

#include "gtest/gtest.h"

namespace dictlog::service {
namespace {

TEST(ServerConfigTest, TextFormatFillsRoutesPoolsAndDefaults) {
  auto config = ParseServerConfig("dictlogd.textproto", R"pb(
    routes { prefix: "app-" pool: "apps" }
    routes { category: "nginx" pool: "web" }
    pools { name: "web" options { compression_level: 9 } }
    default_pool_options { compression_level: -1 dictionary_bytes: 8192 }
  )pb");
  ASSERT_TRUE(config.ok()) << config.status();
  engine::EngineOptions options;
  ASSERT_TRUE(ApplyServerConfig(*config, &options).ok());
  ASSERT_EQ(options.routes.size(), 2u);
  EXPECT_EQ(options.routes[0].prefix, "app-");
  EXPECT_EQ(options.routes[1].category, "nginx");
  EXPECT_EQ(options.default_pool_options.compression_level(), -1);
  EXPECT_EQ(options.default_pool_options.dictionary_bytes(), 8192u);
  EXPECT_EQ(options.default_pool_options.storage_mode(), v1::STORAGE_MODE_RECORD);
  ASSERT_EQ(options.pools.size(), 1u);
  EXPECT_EQ(options.pools[0].second.compression_level(), 9);
}

TEST(ServerConfigTest, JsonIsParsedWithProtobuf) {
  auto config = ParseServerConfig(
      "c.json", R"({"routes": [{"prefix": "k8s-", "pool": "k8s"}],
                    "defaultPoolOptions": {"compressionLevel": 5}})");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->routes(0).pool(), "k8s");
  EXPECT_EQ(config->default_pool_options().compression_level(), 5);
}

TEST(ServerConfigTest, ErrorsNameTheFileAndPosition) {
  auto text = ParseServerConfig("bad.textproto", "routes { prefx: \"a\" }");
  EXPECT_EQ(text.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(text.status().message().find("bad.textproto:1:"), std::string::npos);
  EXPECT_EQ(ParseServerConfig("bad.json", "{nope").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(LoadServerConfig("/nonexistent/dictlogd.textproto").status().code(),
            absl::StatusCode::kNotFound);
  config::ServerConfig bad_level;
  bad_level.mutable_default_pool_options()->set_compression_level(0);
  engine::EngineOptions options;
  EXPECT_EQ(ApplyServerConfig(bad_level, &options).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(ServerConfigTest, RouteFlags) {
  auto prefix = ParseRouteFlag("app-*=apps");
  ASSERT_TRUE(prefix.ok());
  EXPECT_EQ(prefix->prefix, "app-");
  EXPECT_EQ(prefix->pool, "apps");
  auto exact = ParseRouteFlag("nginx=web");
  ASSERT_TRUE(exact.ok());
  EXPECT_EQ(exact->category, "nginx");
  for (const char* bad : {"nginx", "=web", "nginx="}) {
    EXPECT_EQ(ParseRouteFlag(bad).status().code(), absl::StatusCode::kInvalidArgument);
  }
}

}  // namespace
}  // namespace dictlog::service
