// Client routing (docs/api.md "Routing"): a read goes to a serving replica of its
// partition with `dictlog-route: direct`, and once more to another after the replica
// refused it (NotServedHere), failed UNAVAILABLE (or CANCELLED, a unary call on a node
// shutting down) or did not answer within the router's
// attempt timeout (DEADLINE_EXCEEDED before the call's own deadline: a stopped node),
// after a map refresh; the second attempt gets the rest of the call's deadline, so it
// never goes to a replica noted unresponsive lately: with no other, it goes to the seed
// without the header, which forwards (ShardRouter::Retarget). A second
// refusal too (a reassignment under way, the map not caught up) sends it to the seed
// without the header, which forwards it. Bounded: three attempts at most. Without routing, or for partition -1, it goes to the seed server as
// every call did before.
#include <grpcpp/grpcpp.h>

#include <algorithm>

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
  const absl::Time call_deadline = absl::Now() + timeout_;
  auto attempt = [&](const ReadTarget& target, bool first_of_two) {
    grpc::ClientContext context;
    if (deadline) {
      context.set_deadline(absl::ToChronoTime(
          first_of_two ? std::min(call_deadline, absl::Now() + router_->attempt_timeout())
                       : call_deadline));
    }
    AddToken(&context);
    if (target.direct) context.AddMetadata(kRouteHeader, kRouteDirect);
    return call(target.stub.get(), &context);
  };
  const ReadTarget first = router_ == nullptr || partition < 0
                               ? ReadTarget{store_, "", false}
                               : router_->Pick(partition);
  grpc::Status status = attempt(first, first.direct);
  if (status.ok() || !first.direct || (retryable && !retryable())) {
    return FromGrpcStatus(status);
  }
  const std::optional<v1::NotServedHere> refused = NotServedHereOf(status);
  // CANCELLED of a unary call comes from the replica (a node shutting down): this
  // client never cancels one itself.
  const bool unresponsive =
      status.error_code() == grpc::StatusCode::UNAVAILABLE ||
      (deadline && status.error_code() == grpc::StatusCode::CANCELLED) ||
      (status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED && deadline &&
       absl::Now() < call_deadline);
  if (!refused.has_value() && !unresponsive) return FromGrpcStatus(status);
  if (unresponsive) router_->NoteUnresponsive(first.address);
  std::vector<std::string> hint;
  if (refused.has_value()) {
    hint.assign(refused->replica_addresses().begin(), refused->replica_addresses().end());
  }
  ASSIGN_OR_RETURN(ReadTarget second, router_->Retarget(partition, first.address, hint));
  status = attempt(second, false);
  if (second.direct && NotServedHereOf(status).has_value() &&
      (retryable == nullptr || retryable())) {
    status = attempt(router_->Seed(), false);
  }
  return FromGrpcStatus(status);
}

}  // namespace dictlog::client
