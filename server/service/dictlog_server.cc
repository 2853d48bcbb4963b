#include "server/service/dictlog_server.h"

#include <algorithm>

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>

#include "absl/strings/str_cat.h"
#include "server/service/health.pb.h"
#include "server/service/metrics_interceptor.h"

namespace dictlog::service {

DictlogServer::DictlogServer(engine::LogEngine* engine, const ServerOptions& options)
    : engine_(engine),
      router_(options.shards, MakePeerCredentials(options.tls),
              options.forward_attempt_timeout),
      log_store_(&engine_, options.authorizer, &router_),
      admin_(&engine_, options.authorizer) {}

DictlogServer::~DictlogServer() {
  if (server_ != nullptr) Shutdown(absl::ZeroDuration());
}

void ConfigureFrontEnd(const ServerOptions& options, grpc::ServerBuilder* builder,
                       int* port) {
  grpc::EnableDefaultHealthCheckService(true);
  // Links the grpc.health.v1 schema in, so reflection can describe the health service.
  (void)grpc::health::v1::HealthCheckRequest::descriptor();
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  builder->AddListeningPort(options.listen, MakeServerCredentials(options.tls), port);
  builder->SetMaxReceiveMessageSize(options.max_request_bytes);
  builder->AddChannelArgument(GRPC_ARG_MAX_CONCURRENT_STREAMS,
                              options.max_concurrent_streams);
  grpc::ResourceQuota quota("dictlogd");
  quota.Resize(static_cast<size_t>(options.max_memory_bytes));
  quota.SetMaxThreads(options.max_threads);
  builder->SetResourceQuota(quota);
  builder->SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::MIN_POLLERS,
                               std::min(2, options.idle_threads));
  builder->SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::MAX_POLLERS,
                               options.idle_threads);
  // Without this, gRPC sets SO_REUSEPORT and a second server on the same port would
  // silently share it instead of failing.
  builder->AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  if (options.rpc_metrics != nullptr) {
    std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>>
        interceptors;
    interceptors.push_back(std::make_unique<MetricsInterceptorFactory>(options.rpc_metrics));
    builder->experimental().SetInterceptorCreators(std::move(interceptors));
  }
}

absl::StatusOr<std::unique_ptr<DictlogServer>> DictlogServer::Start(
    engine::LogEngine* engine, const ServerOptions& options) {
  std::unique_ptr<DictlogServer> server(new DictlogServer(engine, options));
  grpc::ServerBuilder builder;
  ConfigureFrontEnd(options, &builder, &server->port_);
  builder.RegisterService(&server->log_store_);
  builder.RegisterService(&server->admin_);
  server->server_ = builder.BuildAndStart();
  if (server->server_ == nullptr || server->port_ == 0) {
    server->server_.reset();
    return absl::UnavailableError(
        absl::StrCat("cannot listen on ", options.listen,
                     " (address in use, or not a host:port this machine has?)"));
  }
  server->server_->GetHealthCheckService()->SetServingStatus(engine != nullptr);
  if (options.shards != nullptr) {
    server->server_->GetHealthCheckService()->SetServingStatus(kReplicasHealthService, false);
  }
  return server;
}

void DictlogServer::SetEngine(engine::LogEngine* engine) {
  absl::MutexLock lock(&mu_);
  engine_.Set(engine);
  if (!shutting_down_ && server_ != nullptr) {
    server_->GetHealthCheckService()->SetServingStatus(true);
  }
}

void DictlogServer::SetReplicasServing(bool serving) {
  if (server_ == nullptr) return;
  absl::MutexLock lock(&mu_);
  if (shutting_down_) return;
  server_->GetHealthCheckService()->SetServingStatus(kReplicasHealthService, serving);
}

void DictlogServer::ReportNotServing() {
  if (server_ == nullptr) return;
  absl::MutexLock lock(&mu_);
  shutting_down_ = true;  // A store opening meanwhile must not turn it SERVING again.
  server_->GetHealthCheckService()->SetServingStatus(false);
}

void DictlogServer::Shutdown(absl::Duration grace) {
  if (server_ == nullptr) return;
  {
    absl::MutexLock lock(&mu_);
    shutting_down_ = true;
    server_->GetHealthCheckService()->SetServingStatus(false);
  }
  // Follow streams last until cancelled: end them now rather than at the grace's end.
  if (engine_.ready()) engine_->EndFollows();
  server_->Shutdown(absl::ToChronoTime(absl::Now() + grace));
}

void DictlogServer::Wait() {
  if (server_ != nullptr) server_->Wait();
}

}  // namespace dictlog::service
