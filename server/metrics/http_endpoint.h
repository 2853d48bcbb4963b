// HttpEndpoint: a minimal HTTP/1.1 server for Prometheus scrapes. `GET /metrics`
// (or HEAD) answers with the text the render callback returns; other paths get 404,
// other methods 405. Up to Options::max_connections connections are served at once,
// each by a worker thread of the endpoint; one more gets 503 and is closed. Every
// connection has a total deadline (Options::request_deadline) from accept to the last
// byte sent, so slow clients (a byte every second) cannot hold a worker for longer.
// With Options::bearer_token set, a request without `Authorization: Bearer <token>`
// gets 401. `Connection: close`, requests up to 8 KiB: enough for a scraper, not a
// general web server. No TLS: bind it to an address only scrapers reach.
//
// Thread safety: Start and Stop from one thread; the callback runs on the endpoint's
// worker threads, one call at a time, and must be safe to call concurrently with the
// rest of the program.
#ifndef DICTLOG_SERVER_METRICS_HTTP_ENDPOINT_H_
#define DICTLOG_SERVER_METRICS_HTTP_ENDPOINT_H_

#include <atomic>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace dictlog::metrics {

struct HttpEndpointOptions {
  // Connections served at once (one worker thread each). Default 4.
  int max_connections = 4;
  // From accept to the response sent; then the connection is closed. Default 5 s.
  absl::Duration request_deadline = absl::Seconds(5);
  // Non-empty: requests must carry `Authorization: Bearer <bearer_token>`.
  std::string bearer_token;
};

class HttpEndpoint {
 public:
  using Render = std::function<std::string()>;

  // Binds `listen` (host:port, [v6]:port; port 0 picks a free port) and serves on
  // threads of its own. UNAVAILABLE if it cannot bind, INVALID_ARGUMENT if malformed
  // or max_connections is not positive.
  static absl::StatusOr<std::unique_ptr<HttpEndpoint>> Start(
      const std::string& listen, Render render, HttpEndpointOptions options = {});
  HttpEndpoint(const HttpEndpoint&) = delete;
  HttpEndpoint& operator=(const HttpEndpoint&) = delete;
  // Stops.
  ~HttpEndpoint();

  int port() const { return port_; }
  // Stops accepting and joins the threads (within ~200 ms plus the deadline of the
  // connections in progress).
  void Stop();

 private:
  struct Connection {
    int fd;
    absl::Time deadline;
  };

  HttpEndpoint(int fd, int port, Render render, HttpEndpointOptions options);
  void Accept();
  void Work();
  void Serve(const Connection& connection);
  std::string RenderLocked();

  const int fd_;
  const int port_;
  const Render render_;
  const HttpEndpointOptions options_;
  std::atomic<bool> stop_{false};
  absl::Mutex mu_;
  std::deque<Connection> pending_ ABSL_GUARDED_BY(mu_);
  int busy_ ABSL_GUARDED_BY(mu_) = 0;  // Pending plus being served.
  absl::Mutex render_mu_;              // One render at a time.
  std::thread acceptor_;
  std::vector<std::thread> workers_;
};

}  // namespace dictlog::metrics

#endif  // DICTLOG_SERVER_METRICS_HTTP_ENDPOINT_H_
