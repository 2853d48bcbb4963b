#include "server/metrics/http_endpoint.h"

#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "common/thread_name.h"

namespace dictlog::metrics {
namespace {

constexpr size_t kMaxRequestBytes = 8192;

absl::Status SplitHostPort(const std::string& listen, std::string* host,
                           std::string* port) {
  const size_t colon = listen.rfind(':');
  int number = 0;
  if (colon == std::string::npos ||
      !absl::SimpleAtoi(listen.substr(colon + 1), &number) || number < 0 ||
      number > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("metrics address must be HOST:PORT, got \"", listen, "\""));
  }
  *host = listen.substr(0, colon);
  if (host->size() >= 2 && host->front() == '[' && host->back() == ']') {
    *host = host->substr(1, host->size() - 2);
  }
  *port = listen.substr(colon + 1);
  return absl::OkStatus();
}

// A bound, listening socket for `listen`.
absl::StatusOr<int> Listen(const std::string& listen) {
  std::string host, port;
  if (absl::Status s = SplitHostPort(listen, &host, &port); !s.ok()) return s;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  const char* node = host.empty() ? nullptr : host.c_str();
  if (getaddrinfo(node, port.c_str(), &hints, &found) != 0) {
    return absl::InvalidArgumentError(absl::StrCat("cannot resolve ", listen));
  }
  int fd = -1;
  for (addrinfo* a = found; a != nullptr && fd < 0; a = a->ai_next) {
    fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    const int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(fd, a->ai_addr, a->ai_addrlen) != 0 || ::listen(fd, 16) != 0) {
      close(fd);
      fd = -1;
    }
  }
  freeaddrinfo(found);
  if (fd < 0) {
    return absl::UnavailableError(absl::StrCat("cannot listen on ", listen, ": ",
                                               std::strerror(errno)));
  }
  return fd;
}

int BoundPort(int fd) {
  sockaddr_storage address{};
  socklen_t length = sizeof(address);
  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  if (address.ss_family == AF_INET6) {
    return ntohs(reinterpret_cast<sockaddr_in6*>(&address)->sin6_port);
  }
  return ntohs(reinterpret_cast<sockaddr_in*>(&address)->sin_port);
}

// Milliseconds left until `deadline` (0 if passed), for poll.
int MillisLeft(absl::Time deadline) {
  const int64_t ms = absl::ToInt64Milliseconds(deadline - absl::Now());
  return static_cast<int>(std::clamp<int64_t>(ms, 0, 1000000));
}

// Waits until `fd` is ready for `events` or `deadline` passes.
bool WaitReady(int fd, short events, absl::Time deadline) {
  for (;;) {
    const int left = MillisLeft(deadline);
    if (left == 0) return false;
    pollfd p{fd, events, 0};
    const int n = poll(&p, 1, left);
    if (n > 0) return true;
    if (n < 0 && errno != EINTR) return false;
  }
}

void SendAll(int fd, const std::string& data, absl::Time deadline) {
  size_t sent = 0;
  while (sent < data.size() && WaitReady(fd, POLLOUT, deadline)) {
    const ssize_t n =
        send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (n <= 0) return;
    sent += static_cast<size_t>(n);
  }
}

// The request head (up to the blank line), or empty if the client closed, sent more
// than kMaxRequestBytes without one, or the deadline passed.
std::string ReadHead(int fd, absl::Time deadline) {
  std::string request;
  char buffer[1024];
  while (request.find("\r\n\r\n") == std::string::npos) {
    if (request.size() >= kMaxRequestBytes || !WaitReady(fd, POLLIN, deadline)) return "";
    const ssize_t n = recv(fd, buffer, sizeof(buffer), MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (n <= 0) return "";
    request.append(buffer, static_cast<size_t>(n));
  }
  return request;
}

// Compares in time that depends on the lengths only.
bool SameSecret(absl::string_view a, absl::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= a[i] ^ b[i];
  return diff == 0;
}

// Whether the head carries `Authorization: Bearer <token>`.
bool HasBearer(const std::string& head, absl::string_view token) {
  for (absl::string_view line : absl::StrSplit(head, "\r\n")) {
    const size_t colon = line.find(':');
    if (colon == absl::string_view::npos ||
        !absl::EqualsIgnoreCase(line.substr(0, colon), "authorization")) {
      continue;
    }
    absl::string_view value = absl::StripAsciiWhitespace(line.substr(colon + 1));
    if (value.size() < 7 || !absl::EqualsIgnoreCase(value.substr(0, 7), "bearer ")) {
      return false;
    }
    return SameSecret(absl::StripLeadingAsciiWhitespace(value.substr(7)), token);
  }
  return false;
}

std::string Response(absl::string_view status, absl::string_view content_type,
                     const std::string& body, bool head,
                     absl::string_view extra_headers = "") {
  return absl::StrCat("HTTP/1.1 ", status, "\r\nContent-Type: ", content_type,
                      "\r\nContent-Length: ", body.size(), "\r\n", extra_headers,
                      "Connection: close\r\n\r\n", head ? "" : body);
}

}  // namespace

absl::StatusOr<std::unique_ptr<HttpEndpoint>> HttpEndpoint::Start(
    const std::string& listen, Render render, HttpEndpointOptions options) {
  if (options.max_connections <= 0) {
    return absl::InvalidArgumentError("metrics endpoint needs max_connections > 0");
  }
  absl::StatusOr<int> fd = Listen(listen);
  if (!fd.ok()) return fd.status();
  std::unique_ptr<HttpEndpoint> endpoint(
      new HttpEndpoint(*fd, BoundPort(*fd), std::move(render), std::move(options)));
  HttpEndpoint* e = endpoint.get();
  for (int i = 0; i < e->options_.max_connections; ++i) {
    e->workers_.emplace_back([e] { e->Work(); });
  }
  e->acceptor_ = std::thread([e] { e->Accept(); });
  return endpoint;
}

HttpEndpoint::HttpEndpoint(int fd, int port, Render render, HttpEndpointOptions options)
    : fd_(fd), port_(port), render_(std::move(render)), options_(std::move(options)) {}

HttpEndpoint::~HttpEndpoint() {
  Stop();
  close(fd_);
}

void HttpEndpoint::Stop() {
  stop_ = true;
  if (acceptor_.joinable()) acceptor_.join();
  {
    absl::MutexLock lock(&mu_);  // Wakes the workers.
  }
  for (std::thread& worker : workers_) {
    if (worker.joinable()) worker.join();
  }
  absl::MutexLock lock(&mu_);
  for (const Connection& connection : pending_) close(connection.fd);
  pending_.clear();
}

void HttpEndpoint::Accept() {
  NameThisThread("dl-http-accept");
  while (!stop_) {
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, 200) <= 0) continue;
    const int fd = accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    const absl::Time now = absl::Now();
    absl::MutexLock lock(&mu_);
    if (busy_ >= options_.max_connections) {
      // Every worker is taken: say so without waiting for the client, and close.
      const std::string busy = Response("503 Service Unavailable", "text/plain",
                                        "busy, retry\n", false, "Retry-After: 1\r\n");
      send(fd, busy.data(), busy.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      close(fd);
      continue;
    }
    ++busy_;
    pending_.push_back({fd, now + options_.request_deadline});
  }
}

void HttpEndpoint::Work() {
  NameThisThread("dl-http");
  for (;;) {
    Connection connection;
    {
      absl::MutexLock lock(&mu_);
      const auto ready = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
        return !pending_.empty() || stop_.load();
      };
      // The timeout re-checks stop_, which is not guarded by mu_.
      while (!mu_.AwaitWithTimeout(absl::Condition(&ready), absl::Milliseconds(200))) {
      }
      if (pending_.empty()) return;  // Stopping.
      connection = pending_.front();
      pending_.pop_front();
    }
    Serve(connection);
    {
      // The slot is free before the client can see the close: a client that sends its
      // next request after reading this response whole never finds every slot taken.
      absl::MutexLock lock(&mu_);
      --busy_;
    }
    close(connection.fd);
  }
}

std::string HttpEndpoint::RenderLocked() {
  absl::MutexLock lock(&render_mu_);
  return render_();
}

void HttpEndpoint::Serve(const Connection& connection) {
  const int fd = connection.fd;
  const absl::Time deadline = connection.deadline;
  const std::string request = ReadHead(fd, deadline);
  if (request.empty()) return;
  const std::string line = request.substr(0, request.find("\r\n"));
  const bool get = absl::StartsWith(line, "GET ");
  const bool head = absl::StartsWith(line, "HEAD ");
  if (!get && !head) {
    SendAll(fd, Response("405 Method Not Allowed", "text/plain", "GET only\n", false),
            deadline);
    return;
  }
  if (!options_.bearer_token.empty() && !HasBearer(request, options_.bearer_token)) {
    SendAll(fd,
            Response("401 Unauthorized", "text/plain", "bearer token required\n", head,
                     "WWW-Authenticate: Bearer realm=\"dictlogd\"\r\n"),
            deadline);
    return;
  }
  const size_t path_start = line.find(' ') + 1;
  std::string path = line.substr(path_start, line.find(' ', path_start) - path_start);
  path = path.substr(0, path.find('?'));
  if (path != "/metrics") {
    SendAll(fd, Response("404 Not Found", "text/plain", "try /metrics\n", head), deadline);
    return;
  }
  SendAll(fd,
          Response("200 OK", "text/plain; version=0.0.4; charset=utf-8", RenderLocked(),
                   head),
          deadline);
}

}  // namespace dictlog::metrics
