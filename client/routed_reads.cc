// Client routing (docs/api.md "Routing"): a read goes to a serving replica of its
// partition with `dictlog-route: direct`, and once more to another after the replica
// refused it (NotServedHere) or failed UNAVAILABLE, after a map refresh. Bounded: two
// attempts at most. Without routing, or for partition -1, it goes to the seed server as
// every call did before.
#include <grpcpp/grpcpp.h>

#include "absl/time/clock.h"
#include "client/client.h"
#include "client/grpc_status.h"
#include "common/status_macros.h"

namespace dictlog::client {

absl::StatusOr<std::shared_ptr<const ShardTable>> Client::RoutingTable() const {
  if (router_ == nullptr) return std::make_shared<const ShardTable>();
  return router_->Table();
}

absl::Status Client::RoutedCall(int64_t partition, bool deadline, const RawCall& call,
                                const std::function<bool()>& retryable) const {
  auto attempt = [&](const ReadTarget& target) {
    grpc::ClientContext context;
    if (deadline) SetDeadline(&context);
    AddToken(&context);
    if (target.direct) context.AddMetadata(kRouteHeader, kRouteDirect);
    return call(target.stub.get(), &context);
  };
  const ReadTarget first = router_ == nullptr || partition < 0
                               ? ReadTarget{store_, "", false}
                               : router_->Pick(partition);
  grpc::Status status = attempt(first);
  if (status.ok() || !first.direct || (retryable && !retryable())) {
    return FromGrpcStatus(status);
  }
  const std::optional<v1::NotServedHere> refused = NotServedHereOf(status);
  if (!refused.has_value() && status.error_code() != grpc::StatusCode::UNAVAILABLE) {
    return FromGrpcStatus(status);
  }
  std::vector<std::string> hint;
  if (refused.has_value()) {
    hint.assign(refused->replica_addresses().begin(), refused->replica_addresses().end());
  }
  ASSIGN_OR_RETURN(ReadTarget second, router_->Retarget(partition, first.address, hint));
  return FromGrpcStatus(attempt(second));
}

}  // namespace dictlog::client
