// DictlogServer: a running gRPC server for one LogEngine: the LogStore and Admin
// services, grpc.health.v1 and server reflection (so grpcurl needs no .proto file).
//
// Health reflects reality: NOT_SERVING until the engine is there (Start without one
// serves while the store opens; LogStore and Admin calls get UNAVAILABLE until
// SetEngine) and again once Shutdown begins draining. In cluster mode the health
// service "dictlog.replicas" says whether every partition this node holds serves
// (built and not lagging; NOT_SERVING until told so by SetReplicasServing).
//
// Thread safety: Shutdown may be called from any thread, once; SetEngine once, from
// any thread; Wait from one thread. The engine is borrowed and must outlive the server.
#ifndef DICTLOG_SERVER_SERVICE_DICTLOG_SERVER_H_
#define DICTLOG_SERVER_SERVICE_DICTLOG_SERVER_H_

#include <grpcpp/server.h>
#include <grpcpp/server_builder.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/auth/authorizer.h"
#include "server/engine/log_engine.h"
#include "server/metrics/rpc_metrics.h"
#include "server/service/admin_service.h"
#include "server/service/engine_slot.h"
#include "server/service/log_store_service.h"
#include "server/service/read_router.h"
#include "server/transport/transport.h"

namespace dictlog::service {

struct ServerOptions {
  // host:port to listen on; port 0 picks a free port. Default 127.0.0.1:7070.
  std::string listen = "127.0.0.1:7070";
  // Largest request message accepted; larger ones fail with RESOURCE_EXHAUSTED
  // before any handler runs. Default 64 MiB.
  int max_request_bytes = 64 << 20;
  // Most calls (HTTP/2 streams) in flight on one connection; more wait for a slot
  // (GRPC_ARG_MAX_CONCURRENT_STREAMS). Default 100.
  int max_concurrent_streams = 100;
  // Resource quota: memory gRPC may use for connections and messages. Default 1 GiB.
  int64_t max_memory_bytes = int64_t{1} << 30;
  // Resource quota: most threads of the synchronous server; a call that finds none
  // free fails with RESOURCE_EXHAUSTED. Default 128.
  int max_threads = 128;
  // Handler threads of the synchronous server kept waiting for calls when idle
  // (gRPC's MAX_POLLERS). gRPC's default (2) makes a thread finishing a call exit
  // whenever two others are waiting, so under concurrent load threads (and their
  // per-thread zstd contexts) are created and destroyed on nearly every call.
  // Default 32.
  int idle_threads = 32;
  // TLS / mTLS when tls.enabled(); plaintext otherwise (the caller applies
  // CheckTransport). Default plaintext.
  ServerTls tls;
  // Borrowed, must outlive the server; nullptr (the default): no authentication.
  const auth::Authorizer* authorizer = nullptr;
  // If set (borrowed, must outlive the server), every call is timed and counted into
  // it. Default none.
  metrics::RpcMetrics* rpc_metrics = nullptr;
  // Cluster mode: the shard map reads are routed with (borrowed, must outlive the
  // server; read_router.h). Default none: single node, every read served here.
  const cluster::ShardDirectory* shards = nullptr;
  // Cluster mode: the longest a forwarded read waits for one replica while another
  // remains (then it tries that one; read_router.h). Default 1 s.
  absl::Duration forward_attempt_timeout = absl::Seconds(1);
};

// The gRPC front end every dictlog server shares (dictlogd, and the comparison's
// baselines in benchmarks/compare): the listening port and its credentials, message,
// stream and resource limits, the metrics interceptor, grpc.health.v1 and reflection.
// The caller registers its services and builds; *port receives the bound port then.
void ConfigureFrontEnd(const ServerOptions& options, grpc::ServerBuilder* builder,
                       int* port);

// The grpc.health.v1 service name of SetReplicasServing.
inline constexpr char kReplicasHealthService[] = "dictlog.replicas";

class DictlogServer {
 public:
  // UNAVAILABLE if the address cannot be bound. `engine` may be null: the store is
  // still opening (see SetEngine).
  static absl::StatusOr<std::unique_ptr<DictlogServer>> Start(
      engine::LogEngine* engine, const ServerOptions& options);

  DictlogServer(const DictlogServer&) = delete;
  DictlogServer& operator=(const DictlogServer&) = delete;
  ~DictlogServer();

  // The bound port.
  int port() const { return port_; }

  // The store is open: calls reach `engine` and health turns SERVING (unless the
  // server is already shutting down).
  void SetEngine(engine::LogEngine* engine);
  // Where the services find the engine (empty while the store opens).
  const EngineSlot& engine_slot() const { return engine_; }

  // Cluster mode: whether every partition this node holds serves (health service
  // kReplicasHealthService). Ignored once shutting down. Any thread.
  void SetReplicasServing(bool serving);

  // Reports NOT_SERVING to health checks; calls are still served (the first step of a
  // graceful shutdown: load balancers stop sending new calls).
  void ReportNotServing();
  // Reports NOT_SERVING to health checks, ends Follow streams (UNAVAILABLE), stops
  // accepting calls, and lets calls in flight finish for up to `grace` before
  // cancelling them.
  void Shutdown(absl::Duration grace);
  // Blocks until the server has shut down.
  void Wait();

 private:
  DictlogServer(engine::LogEngine* engine, const ServerOptions& options);

  EngineSlot engine_;
  const ReadRouter router_;
  absl::Mutex mu_;  // Orders SetEngine's SERVING and Shutdown's NOT_SERVING.
  bool shutting_down_ ABSL_GUARDED_BY(mu_) = false;
  LogStoreService log_store_;
  AdminService admin_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
};

}  // namespace dictlog::service

#endif  // DICTLOG_SERVER_SERVICE_DICTLOG_SERVER_H_
