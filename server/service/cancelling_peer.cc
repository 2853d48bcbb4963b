// CancellingPeer (cancelling_peer.h).
#include "server/service/cancelling_peer.h"

#include <grpcpp/server_builder.h>

#include <atomic>

#include "proto/dictlog.grpc.pb.h"

namespace dictlog::service {

class CancellingPeer::Service final : public v1::LogStore::Service {
 public:
  grpc::Status Get(grpc::ServerContext*, const v1::GetRequest*, v1::GetResponse*) override {
    return Cancel();
  }
  grpc::Status MultiGet(grpc::ServerContext*, const v1::MultiGetRequest*,
                        v1::MultiGetResponse*) override {
    return Cancel();
  }
  grpc::Status Append(grpc::ServerContext*, const v1::AppendRequest*,
                      v1::AppendResponse*) override {
    return Cancel();
  }
  int calls() const { return calls_.load(); }

 private:
  grpc::Status Cancel() {
    ++calls_;
    return grpc::Status(grpc::StatusCode::CANCELLED, "shutting down");
  }
  std::atomic<int> calls_{0};
};

CancellingPeer::CancellingPeer() : service_(std::make_unique<Service>()) {
  int port = 0;
  grpc::ServerBuilder builder;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(service_.get());
  server_ = builder.BuildAndStart();
  if (server_ != nullptr && port > 0) address_ = "127.0.0.1:" + std::to_string(port);
}

CancellingPeer::~CancellingPeer() {
  if (server_ != nullptr) server_->Shutdown();
}

int CancellingPeer::calls() const { return service_->calls(); }

}  // namespace dictlog::service
