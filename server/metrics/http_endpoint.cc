#include "server/metrics/http_endpoint.h"

#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

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

void SendAll(int fd, const std::string& data) {
  size_t sent = 0;
  while (sent < data.size()) {
    const ssize_t n = send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return;
    sent += static_cast<size_t>(n);
  }
}

std::string Response(absl::string_view status, absl::string_view content_type,
                     const std::string& body, bool head) {
  return absl::StrCat("HTTP/1.1 ", status, "\r\nContent-Type: ", content_type,
                      "\r\nContent-Length: ", body.size(),
                      "\r\nConnection: close\r\n\r\n", head ? "" : body);
}

}  // namespace

absl::StatusOr<std::unique_ptr<HttpEndpoint>> HttpEndpoint::Start(
    const std::string& listen, Render render) {
  absl::StatusOr<int> fd = Listen(listen);
  if (!fd.ok()) return fd.status();
  std::unique_ptr<HttpEndpoint> endpoint(
      new HttpEndpoint(*fd, BoundPort(*fd), std::move(render)));
  endpoint->thread_ = std::thread([e = endpoint.get()] { e->Run(); });
  return endpoint;
}

HttpEndpoint::HttpEndpoint(int fd, int port, Render render)
    : fd_(fd), port_(port), render_(std::move(render)) {}

HttpEndpoint::~HttpEndpoint() {
  Stop();
  close(fd_);
}

void HttpEndpoint::Stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

void HttpEndpoint::Run() {
  while (!stop_) {
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, 200) <= 0) continue;
    const int connection = accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (connection < 0) continue;
    const timeval timeout{2, 0};
    setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
    setsockopt(connection, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
    Serve(connection);
    close(connection);
  }
}

void HttpEndpoint::Serve(int connection) const {
  std::string request;
  char buffer[1024];
  while (request.find("\r\n\r\n") == std::string::npos &&
         request.size() < kMaxRequestBytes) {
    const ssize_t n = recv(connection, buffer, sizeof(buffer), 0);
    if (n <= 0) return;
    request.append(buffer, static_cast<size_t>(n));
  }
  const std::string line = request.substr(0, request.find("\r\n"));
  const bool get = absl::StartsWith(line, "GET ");
  const bool head = absl::StartsWith(line, "HEAD ");
  if (!get && !head) {
    SendAll(connection,
            Response("405 Method Not Allowed", "text/plain", "GET only\n", false));
    return;
  }
  const size_t path_start = line.find(' ') + 1;
  std::string path = line.substr(path_start, line.find(' ', path_start) - path_start);
  path = path.substr(0, path.find('?'));
  if (path != "/metrics") {
    SendAll(connection, Response("404 Not Found", "text/plain", "try /metrics\n", head));
    return;
  }
  SendAll(connection, Response("200 OK", "text/plain; version=0.0.4; charset=utf-8",
                               render_(), head));
}

}  // namespace dictlog::metrics
