// HttpEndpoint over a real loopback socket, with a plain socket client.
#include "server/metrics/http_endpoint.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace dictlog::metrics {
namespace {

// Sends `request` to 127.0.0.1:port and returns the whole response.
std::string Exchange(int port, const std::string& request) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  inet_pton(AF_INET, "127.0.0.1", &address.sin_addr);
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    close(fd);
    return "connect failed";
  }
  send(fd, request.data(), request.size(), 0);
  std::string response;
  char buffer[4096];
  ssize_t n;
  while ((n = recv(fd, buffer, sizeof(buffer), 0)) > 0) response.append(buffer, n);
  close(fd);
  return response;
}

TEST(HttpEndpointTest, ServesMetricsRenderedPerRequest) {
  std::atomic<int> scrapes{0};
  auto endpoint = HttpEndpoint::Start("127.0.0.1:0", [&scrapes] {
    return "scrape " + std::to_string(++scrapes) + "\n";
  });
  ASSERT_TRUE(endpoint.ok()) << endpoint.status();
  ASSERT_GT((*endpoint)->port(), 0);
  const std::string first =
      Exchange((*endpoint)->port(), "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_TRUE(absl::StartsWith(first, "HTTP/1.1 200 OK\r\n")) << first;
  EXPECT_TRUE(absl::StrContains(first, "Content-Type: text/plain; version=0.0.4"));
  EXPECT_TRUE(absl::StrContains(first, "Content-Length: 9\r\n"));
  EXPECT_TRUE(absl::EndsWith(first, "\r\n\r\nscrape 1\n")) << first;
  const std::string second =
      Exchange((*endpoint)->port(), "GET /metrics?x=1 HTTP/1.0\r\n\r\n");
  EXPECT_TRUE(absl::EndsWith(second, "scrape 2\n")) << second;
}

TEST(HttpEndpointTest, OtherPathsAndMethodsAreRefused) {
  auto endpoint = HttpEndpoint::Start("127.0.0.1:0", [] { return std::string("m 1\n"); });
  ASSERT_TRUE(endpoint.ok()) << endpoint.status();
  const int port = (*endpoint)->port();
  EXPECT_TRUE(absl::StartsWith(Exchange(port, "GET / HTTP/1.1\r\n\r\n"),
                               "HTTP/1.1 404 Not Found\r\n"));
  EXPECT_TRUE(absl::StartsWith(Exchange(port, "POST /metrics HTTP/1.1\r\n\r\n"),
                               "HTTP/1.1 405 Method Not Allowed\r\n"));
  const std::string head = Exchange(port, "HEAD /metrics HTTP/1.1\r\n\r\n");
  EXPECT_TRUE(absl::StartsWith(head, "HTTP/1.1 200 OK\r\n"));
  EXPECT_TRUE(absl::EndsWith(head, "\r\n\r\n")) << head;  // No body.
}

TEST(HttpEndpointTest, BadAddressesFail) {
  EXPECT_EQ(HttpEndpoint::Start("nonsense", [] { return std::string(); }).status().code(),
            absl::StatusCode::kInvalidArgument);
  auto first = HttpEndpoint::Start("127.0.0.1:0", [] { return std::string(); });
  ASSERT_TRUE(first.ok());
  auto second = HttpEndpoint::Start("127.0.0.1:" + std::to_string((*first)->port()),
                                    [] { return std::string(); });
  EXPECT_EQ(second.status().code(), absl::StatusCode::kUnavailable);
}

TEST(HttpEndpointTest, StopsPromptly) {
  auto endpoint = HttpEndpoint::Start("127.0.0.1:0", [] { return std::string(); });
  ASSERT_TRUE(endpoint.ok());
  const int port = (*endpoint)->port();
  endpoint->reset();
  EXPECT_EQ(Exchange(port, "GET /metrics HTTP/1.1\r\n\r\n"), "connect failed");
}

}  // namespace
}  // namespace dictlog::metrics
