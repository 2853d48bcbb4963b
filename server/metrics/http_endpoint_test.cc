// HttpEndpoint over a real loopback socket, with a plain socket client.
#include "server/metrics/http_endpoint.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>

#include "absl/strings/match.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace dictlog::metrics {
namespace {

// A socket connected to 127.0.0.1:port, or -1.
int Connect(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  inet_pton(AF_INET, "127.0.0.1", &address.sin_addr);
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// Whether the server has closed `fd` (or sent something) within `timeout`.
bool ClosedWithin(int fd, absl::Duration timeout) {
  pollfd p{fd, POLLIN, 0};
  return poll(&p, 1, static_cast<int>(absl::ToInt64Milliseconds(timeout))) > 0;
}

// Sends `request` to 127.0.0.1:port and returns the whole response.
std::string Exchange(int port, const std::string& request) {
  const int fd = Connect(port);
  if (fd < 0) return "connect failed";
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

// A client that sent part of a request and stalls holds one connection, not the
// endpoint: a scrape on another connection is answered while the slow one stays open.
TEST(HttpEndpointTest, SlowClientDoesNotBlockAConcurrentScrape) {
  HttpEndpointOptions options;
  options.request_deadline = absl::Seconds(60);
  auto endpoint =
      HttpEndpoint::Start("127.0.0.1:0", [] { return std::string("m 1\n"); }, options);
  ASSERT_TRUE(endpoint.ok()) << endpoint.status();
  const int slow = Connect((*endpoint)->port());
  ASSERT_GE(slow, 0);
  ASSERT_GT(send(slow, "G", 1, 0), 0);
  const std::string scrape =
      Exchange((*endpoint)->port(), "GET /metrics HTTP/1.1\r\n\r\n");
  EXPECT_TRUE(absl::EndsWith(scrape, "\r\n\r\nm 1\n")) << scrape;
  EXPECT_FALSE(ClosedWithin(slow, absl::ZeroDuration())) << "slow client was dropped";
  close(slow);
}

// The deadline counts from accept, not per read: a client trickling a byte at a time
// is cut off once it passes.
TEST(HttpEndpointTest, TricklingClientIsClosedAtTheDeadline) {
  HttpEndpointOptions options;
  options.request_deadline = absl::Milliseconds(300);
  auto endpoint =
      HttpEndpoint::Start("127.0.0.1:0", [] { return std::string("m 1\n"); }, options);
  ASSERT_TRUE(endpoint.ok()) << endpoint.status();
  const int slow = Connect((*endpoint)->port());
  ASSERT_GE(slow, 0);
  const absl::Time start = absl::Now();
  bool closed = false;
  while (!closed && absl::Now() - start < absl::Seconds(30)) {
    send(slow, "X", 1, MSG_NOSIGNAL);  // Never a whole request.
    closed = ClosedWithin(slow, absl::Milliseconds(50));
  }
  EXPECT_TRUE(closed);
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));
  close(slow);
}

// Beyond max_connections a connection is answered 503 at once, not queued.
TEST(HttpEndpointTest, ConnectionsBeyondTheBoundGet503) {
  HttpEndpointOptions options;
  options.max_connections = 1;
  options.request_deadline = absl::Seconds(60);
  auto endpoint =
      HttpEndpoint::Start("127.0.0.1:0", [] { return std::string("m 1\n"); }, options);
  ASSERT_TRUE(endpoint.ok()) << endpoint.status();
  const int slow = Connect((*endpoint)->port());
  ASSERT_GE(slow, 0);
  std::string busy;
  const absl::Time start = absl::Now();
  // The first connection may not be accepted yet when the second arrives.
  while (!absl::StartsWith(busy, "HTTP/1.1 503") && absl::Now() - start < absl::Seconds(30)) {
    busy = Exchange((*endpoint)->port(), "GET /metrics HTTP/1.1\r\n\r\n");
  }
  EXPECT_TRUE(absl::StartsWith(busy, "HTTP/1.1 503 Service Unavailable\r\n")) << busy;
  close(slow);
  EXPECT_EQ(HttpEndpoint::Start("127.0.0.1:0", [] { return std::string(); }, {0})
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(HttpEndpointTest, BearerTokenIsRequiredWhenConfigured) {
  HttpEndpointOptions options;
  options.bearer_token = "metrics-secret-0123456789";
  auto endpoint =
      HttpEndpoint::Start("127.0.0.1:0", [] { return std::string("m 1\n"); }, options);
  ASSERT_TRUE(endpoint.ok()) << endpoint.status();
  const int port = (*endpoint)->port();
  for (const std::string& authorization :
       {std::string(), std::string("Authorization: Bearer wrong-secret-0123456789\r\n"),
        std::string("Authorization: Basic bWV0cmljcy1zZWNyZXQ=\r\n"),
        std::string("Authorization: Bearer metrics-secret-012345678\r\n"),
        std::string("X-Authorization: Bearer metrics-secret-0123456789\r\n")}) {
    const std::string refused =
        Exchange(port, "GET /metrics HTTP/1.1\r\n" + authorization + "\r\n");
    EXPECT_TRUE(absl::StartsWith(refused, "HTTP/1.1 401 Unauthorized\r\n"))
        << authorization << refused;
    EXPECT_FALSE(absl::StrContains(refused, "m 1")) << refused;
  }
  const std::string ok = Exchange(
      port, "GET /metrics HTTP/1.1\r\nauthorization: bearer metrics-secret-0123456789\r\n\r\n");
  EXPECT_TRUE(absl::EndsWith(ok, "\r\n\r\nm 1\n")) << ok;
}

}  // namespace
}  // namespace dictlog::metrics
