// HttpEndpoint: a minimal HTTP/1.1 server for Prometheus scrapes. `GET /metrics`
// (or HEAD) answers with the text the render callback returns; other paths get 404,
// other methods 405. One connection at a time, `Connection: close`, requests up to
// 8 KiB, 2 s socket timeouts: enough for a scraper, not a general web server.
//
// Thread safety: Start and Stop from one thread; the callback runs on the endpoint's
// own thread and must be safe to call concurrently with the rest of the program.
#ifndef DICTLOG_SERVER_METRICS_HTTP_ENDPOINT_H_
#define DICTLOG_SERVER_METRICS_HTTP_ENDPOINT_H_

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"

namespace dictlog::metrics {

class HttpEndpoint {
 public:
  using Render = std::function<std::string()>;

  // Binds `listen` (host:port, [v6]:port; port 0 picks a free port) and serves on a
  // thread of its own. UNAVAILABLE if it cannot bind, INVALID_ARGUMENT if malformed.
  static absl::StatusOr<std::unique_ptr<HttpEndpoint>> Start(const std::string& listen,
                                                             Render render);
  HttpEndpoint(const HttpEndpoint&) = delete;
  HttpEndpoint& operator=(const HttpEndpoint&) = delete;
  // Stops.
  ~HttpEndpoint();

  int port() const { return port_; }
  // Stops accepting and joins the thread (within ~200 ms plus a request in progress).
  void Stop();

 private:
  HttpEndpoint(int fd, int port, Render render);
  void Run();
  void Serve(int connection) const;

  const int fd_;
  const int port_;
  const Render render_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace dictlog::metrics

#endif  // DICTLOG_SERVER_METRICS_HTTP_ENDPOINT_H_
