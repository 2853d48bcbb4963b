#include "server/service/read_router.h"

#include <grpcpp/create_channel.h>

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "server/service/grpc_status.h"

namespace dictlog::service {
namespace {

constexpr int kMaxPeerResponseBytes = 128 << 20;
constexpr char kNotServedHereType[] = "type.googleapis.com/dictlog.v1.NotServedHere";

// A peer's CANCELLED: a node shutting down cancels the calls in flight. The caller's
// own cancellation is not passed on to the forwarded call, so CANCELLED while the
// caller is still waiting came from the peer.
bool CancelledByPeer(const grpc::Status& status, const grpc::ServerContext& caller) {
  return status.error_code() == grpc::StatusCode::CANCELLED && !caller.IsCancelled();
}

// The replica did not answer: down, shutting down, or stopped (its attempt timed out
// while the caller's deadline, `caller_deadline`, lasts).
bool Unresponsive(const grpc::Status& status, const grpc::ServerContext& caller,
                  absl::Time caller_deadline) {
  return status.error_code() == grpc::StatusCode::UNAVAILABLE ||
         CancelledByPeer(status, caller) ||
         (status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED &&
          absl::Now() < caller_deadline);
}

// Peers answering these may be followed by the next replica: unresponsive, or
// FAILED_PRECONDITION (NotServedHere, or not serving yet).
bool TryNext(const grpc::Status& status, const grpc::ServerContext& caller,
             absl::Time caller_deadline) {
  return Unresponsive(status, caller, caller_deadline) ||
         status.error_code() == grpc::StatusCode::FAILED_PRECONDITION;
}

// A NotServedHere: the replica refused before doing anything.
bool Refused(const grpc::Status& status) {
  return status.error_code() == grpc::StatusCode::FAILED_PRECONDITION &&
         !status.error_details().empty();
}

// The answer to a caller whose call is not repeated: an attempt that timed out while
// the caller's deadline lasts is UNAVAILABLE (retry, with the same request id), saying
// the call may have been applied; anything else is the replica's answer.
grpc::Status Settled(const grpc::Status& status, const std::string& address,
                     absl::Time caller_deadline) {
  if (status.error_code() != grpc::StatusCode::DEADLINE_EXCEEDED ||
      absl::Now() >= caller_deadline) {
    return status;
  }
  return grpc::Status(
      grpc::StatusCode::UNAVAILABLE,
      absl::StrCat("the replica at ", address, " did not answer in time; the call may or may "
                   "not have been applied there (retry with the same request_id)"));
}

}  // namespace

ReadRouter::ReadRouter(const cluster::ShardDirectory* directory,
                       std::shared_ptr<grpc::ChannelCredentials> peer_credentials,
                       absl::Duration attempt_timeout,
                       absl::Duration avoid_unresponsive_for)
    : directory_(directory),
      credentials_(std::move(peer_credentials)),
      attempt_timeout_(attempt_timeout),
      avoid_unresponsive_for_(avoid_unresponsive_for) {}

bool ReadRouter::Direct(const grpc::ServerContext& context) {
  const auto& metadata = context.client_metadata();
  auto it = metadata.find(kRouteHeader);
  return it != metadata.end() && absl::string_view(it->second.data(), it->second.size()) ==
                                     kRouteDirect;
}

int32_t ReadRouter::PartitionOfPool(absl::string_view pool) const {
  return enabled() ? directory_->PartitionOfPool(pool) : -1;
}

int32_t ReadRouter::PartitionOfId(absl::string_view id) const {
  const size_t slash = id.rfind('/');
  if (!enabled() || slash == absl::string_view::npos) return -1;
  return directory_->PartitionOfPool(id.substr(0, slash));
}

ReadRouter::Split ReadRouter::SplitIds(const std::vector<std::string>& ids) const {
  Split split;
  if (!enabled()) {
    for (size_t i = 0; i < ids.size(); ++i) split.here.push_back(i);
    return split;
  }
  std::vector<std::optional<cluster::Placement>> placements(directory_->partitions());
  std::vector<int> group(directory_->partitions(), -1);  // Index into split.elsewhere.
  for (size_t i = 0; i < ids.size(); ++i) {
    const int32_t p = PartitionOfId(ids[i]);
    if (p < 0) {
      split.here.push_back(i);
      continue;
    }
    if (!placements[p].has_value()) placements[p] = Place(p);
    if (placements[p]->here) {
      split.here.push_back(i);
      continue;
    }
    if (group[p] < 0) {
      group[p] = static_cast<int>(split.elsewhere.size());
      split.elsewhere.push_back({*placements[p], {}});
    }
    split.elsewhere[group[p]].second.push_back(i);
  }
  return split;
}

std::optional<grpc::Status> ReadRouter::Route(const grpc::ServerContext& caller,
                                              int32_t partition, absl::string_view method,
                                              const PeerCall& call, Span span) const {
  if (!enabled() || partition < 0) return std::nullopt;
  const cluster::Placement placement = Place(partition);
  if (placement.here) return std::nullopt;
  if (Direct(caller)) return NotServedHere(placement);
  if (span == Span::kStream) return ForwardStream(caller, placement, method, call);
  return Forward(caller, placement, method, call);
}

grpc::Status ReadRouter::NotServedHere(const cluster::Placement& placement) const {
  directory_->CountNotServedHere();
  v1::NotServedHere detail;
  detail.set_partition(static_cast<uint32_t>(placement.partition));
  for (const std::string& address : placement.addresses) detail.add_replica_addresses(address);
  detail.set_epoch(placement.epoch);
  const absl::Status status = absl::FailedPreconditionError(absl::StrCat(
      "partition ", placement.partition, " is not served by node ", directory_->node_name(),
      "; replicas serving it: [", absl::StrJoin(placement.addresses, ","), "]"));
  v1::RpcStatus details;
  v1::TypedDetail* typed = details.add_details();
  typed->set_type_url(kNotServedHereType);
  typed->set_value(detail.SerializeAsString());
  return ToGrpcStatus(status, details);
}

std::shared_ptr<grpc::Channel> ReadRouter::ChannelTo(const std::string& address) const {
  absl::MutexLock lock(&mu_);
  std::shared_ptr<grpc::Channel>& channel = channels_[address];
  if (channel == nullptr) {  // Peers answer up to --max_response_bytes (64 MiB) and ids.
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(kMaxPeerResponseBytes);
    channel = grpc::CreateCustomChannel(address, credentials_, args);
  }
  return channel;
}

std::vector<std::string> ReadRouter::RespondingFirst(
    const std::vector<std::string>& addresses) const {
  std::vector<std::string> first, last;
  const absl::Time now = absl::Now();
  absl::MutexLock lock(&mu_);
  for (const std::string& address : addresses) {
    auto it = avoid_until_.find(address);
    const bool avoided = it != avoid_until_.end() && now < it->second;
    if (it != avoid_until_.end() && !avoided) avoid_until_.erase(it);
    (avoided ? last : first).push_back(address);
  }
  first.insert(first.end(), last.begin(), last.end());
  return first;
}

void ReadRouter::NoteUnresponsive(const std::string& address) const {
  absl::MutexLock lock(&mu_);
  avoid_until_[address] = absl::Now() + avoid_unresponsive_for_;
}

grpc::Status ReadRouter::Forward(const grpc::ServerContext& caller,
                                 const cluster::Placement& placement, absl::string_view method,
                                 const PeerCall& call, Repeat repeat) const {
  return ForwardTo(caller, placement, method, call, repeat, /*stream=*/false);
}

grpc::Status ReadRouter::ForwardStream(const grpc::ServerContext& caller,
                                       const cluster::Placement& placement,
                                       absl::string_view method, const PeerCall& call) const {
  return ForwardTo(caller, placement, method, call, Repeat::kAllowed, /*stream=*/true);
}

grpc::Status ReadRouter::ForwardTo(const grpc::ServerContext& caller,
                                   const cluster::Placement& placement,
                                   absl::string_view method, const PeerCall& call,
                                   Repeat repeat, bool stream) const {
  grpc::Status last(grpc::StatusCode::UNAVAILABLE,
                    absl::StrCat("no live replica serves partition ", placement.partition,
                                 " now (node ", directory_->node_name(),
                                 " does not hold it or is still building it); retry"));
  const absl::Time caller_deadline = absl::FromChrono(caller.deadline());
  const std::vector<std::string> addresses = RespondingFirst(placement.addresses);
  for (size_t i = 0; i < addresses.size(); ++i) {
    const std::string& address = addresses[i];
    const bool final_replica = i + 1 == addresses.size();
    // A stream's context takes the caller's deadline and cancellation.
    std::unique_ptr<grpc::ClientContext> context =
        stream ? grpc::ClientContext::FromServerContext(caller)
               : std::make_unique<grpc::ClientContext>();
    if (!stream) {
      context->set_deadline(absl::ToChronoTime(
          final_replica ? caller_deadline
                        : std::min(caller_deadline, absl::Now() + attempt_timeout_)));
    }
    context->AddMetadata(kRouteHeader, kRouteDirect);
    const auto& metadata = caller.client_metadata();
    if (auto it = metadata.find("authorization"); it != metadata.end()) {
      context->AddMetadata("authorization", std::string(it->second.data(), it->second.size()));
    }
    v1::LogStore::Stub stub(ChannelTo(address));
    directory_->CountForwarded(method);
    last = call(&stub, context.get());
    if (Unresponsive(last, caller, caller_deadline)) NoteUnresponsive(address);
    if (repeat == Repeat::kOnlyIfRefused && !Refused(last)) {
      return Settled(last, address, caller_deadline);
    }
    if (!TryNext(last, caller, caller_deadline)) return last;
  }
  if (CancelledByPeer(last, caller)) {  // The last replica shut down too: retry later.
    return grpc::Status(grpc::StatusCode::UNAVAILABLE,
                        absl::StrCat("the replica at ", addresses.back(),
                                     " cancelled the call (shutting down?); retry"));
  }
  // Every replica refused (NotServedHere: they and this node disagree for a moment,
  // e.g. during a reassignment). The caller did not route: UNAVAILABLE, retry.
  if (last.error_code() == grpc::StatusCode::FAILED_PRECONDITION &&
      !last.error_details().empty()) {
    return grpc::Status(grpc::StatusCode::UNAVAILABLE,
                        absl::StrCat("no replica serves partition ", placement.partition,
                                     " now (", last.error_message(), "); retry"));
  }
  return last;
}

}  // namespace dictlog::service
