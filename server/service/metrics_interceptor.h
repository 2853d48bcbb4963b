// MetricsInterceptorFactory: a gRPC server interceptor that times every call and
// records it in RpcMetrics by service, method and status code; for the LogStore's
// appends and reads (Get, MultiGet, Scan, GetFrame, MultiGetFrames) it also counts
// records and payload bytes (appends only when the call succeeds, since nothing is
// written otherwise; a frame counts the payload size its header declares).
//
// Thread safety: gRPC creates one interceptor per call; the metrics are borrowed, are
// thread-safe, and must outlive the server.
#ifndef DICTLOG_SERVER_SERVICE_METRICS_INTERCEPTOR_H_
#define DICTLOG_SERVER_SERVICE_METRICS_INTERCEPTOR_H_

#include <grpcpp/support/server_interceptor.h>

#include "server/metrics/rpc_metrics.h"

namespace dictlog::service {

class MetricsInterceptorFactory
    : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  explicit MetricsInterceptorFactory(metrics::RpcMetrics* metrics) : metrics_(metrics) {}

  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override;

 private:
  metrics::RpcMetrics* const metrics_;
};

}  // namespace dictlog::service

#endif  // DICTLOG_SERVER_SERVICE_METRICS_INTERCEPTOR_H_
