#include "server/service/follow_proxy.h"

#include <chrono>
#include <string>

#include "absl/strings/str_cat.h"

namespace dictlog::service {
namespace {

// Whether another round may find a replica: the replicas failed or refused, and the
// caller still waits.
bool Resumable(const grpc::Status& status, const grpc::ServerContext& caller) {
  if (status.error_code() != grpc::StatusCode::UNAVAILABLE &&
      status.error_code() != grpc::StatusCode::FAILED_PRECONDITION) {
    return false;
  }
  return !caller.IsCancelled() && std::chrono::system_clock::now() < caller.deadline();
}

// Where the caller resumes after the last record it was sent (none: as it started).
std::string ResumeHint(const v1::FollowRequest& request) {
  return request.after_id().empty() ? std::string("follow again")
                                    : "resume after " + request.after_id();
}

}  // namespace

void ProxyStop::Stop() {
  absl::MutexLock lock(&mu_);
  stopped_ = true;
  if (peer_ != nullptr) peer_->TryCancel();
}

bool ProxyStop::stopped() const {
  absl::MutexLock lock(&mu_);
  return stopped_;
}

void ProxyStop::Attach(grpc::ClientContext* peer) {
  absl::MutexLock lock(&mu_);
  peer_ = peer;
  if (peer != nullptr && stopped_) peer->TryCancel();
}

grpc::Status ProxyFollow(const ReadRouter& router, int32_t partition,
                         grpc::ServerContext* caller, v1::FollowRequest request,
                         grpc::ServerWriter<v1::FollowResponse>* writer, ProxyStop* stop) {
  grpc::Status status;
  int idle_rounds = 0;
  while (idle_rounds < kMaxIdleRounds) {
    const cluster::Placement placement = router.Place(partition);
    if (placement.here) {  // Became served here mid-stream: the caller resumes here.
      return grpc::Status(
          grpc::StatusCode::UNAVAILABLE,
          absl::StrCat("partition ", partition, " moved to this node; ", ResumeHint(request)));
    }
    bool delivered = false;
    status = router.ForwardStream(
        *caller, placement, "Follow", [&](v1::LogStore::Stub* stub, grpc::ClientContext* peer) {
          stop->Attach(peer);
          auto reader = stub->Follow(peer, request);
          v1::FollowResponse response;
          while (reader->Read(&response)) {
            if (response.records_size() > 0) {  // The next replica starts after it.
              request.set_after_id(response.records(response.records_size() - 1).id());
              request.set_from_start(false);
              delivered = true;
            }
            if (!writer->Write(response)) peer->TryCancel();  // The caller went away.
          }
          grpc::Status finished = reader->Finish();
          stop->Attach(nullptr);
          return finished;
        });
    if (stop->stopped()) {
      return grpc::Status(grpc::StatusCode::UNAVAILABLE,
                          "the server is shutting down; " + ResumeHint(request));
    }
    if (!Resumable(status, *caller)) return status;
    idle_rounds = delivered ? 0 : idle_rounds + 1;
  }
  return status;
}

}  // namespace dictlog::service
