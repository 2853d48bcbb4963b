// ReadRouter: where the LogStore read handlers send a read in cluster mode
// (docs/cluster.md "Routing", ADR 0022). A read of a partition this node serves is
// answered here; otherwise a call with the metadata `dictlog-route: direct` gets
// FAILED_PRECONDITION with a NotServedHere in grpc-status-details-bin, and any other is
// forwarded to a live replica serving the partition: one cached channel per peer
// address, the caller's `authorization` metadata and remaining deadline, and
// `dictlog-route: direct` (so at most one hop); a replica that answers UNAVAILABLE,
// FAILED_PRECONDITION or CANCELLED (a node shutting down cancels the calls in flight)
// is followed by the next; the last one's CANCELLED answers UNAVAILABLE. Every replica but the last gets at most
// `attempt_timeout` of the caller's deadline, and one that does not answer within it
// (DEADLINE_EXCEEDED, e.g. a SIGSTOPped node still announced live) is followed by the
// next too, while the caller's deadline lasts. A replica that did not answer so
// (UNAVAILABLE, CANCELLED by it, or timed out) is tried after the others for
// `avoid_unresponsive_for` (3 s, about the 3 announcement intervals until it is not
// live), so the last replica, which gets the rest of the caller's deadline, is one that
// answered lately when there is one (ADR 0024). No replica, or every one refused
// (NotServedHere): UNAVAILABLE.
//
// Thread safety: any thread may call it concurrently. The directory is borrowed and
// must outlive it; without one (single node) every read is served here.
#ifndef DICTLOG_SERVER_SERVICE_READ_ROUTER_H_
#define DICTLOG_SERVER_SERVICE_READ_ROUTER_H_

#include <grpcpp/channel.h>
#include <grpcpp/client_context.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/server_context.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "proto/dictlog.grpc.pb.h"
#include "server/cluster/shard_directory.h"

namespace dictlog::service {

inline constexpr char kRouteHeader[] = "dictlog-route";
inline constexpr char kRouteDirect[] = "direct";

class ReadRouter {
 public:
  // `directory` null: single node. `peer_credentials` for the channels to peers.
  // `attempt_timeout`: the longest wait for one replica while another remains.
  // `avoid_unresponsive_for`: how long a replica that did not answer is tried last.
  ReadRouter(const cluster::ShardDirectory* directory,
             std::shared_ptr<grpc::ChannelCredentials> peer_credentials,
             absl::Duration attempt_timeout = absl::Seconds(1),
             absl::Duration avoid_unresponsive_for = absl::Seconds(3));

  using PeerCall =
      std::function<grpc::Status(v1::LogStore::Stub* stub, grpc::ClientContext* context)>;

  bool enabled() const { return directory_ != nullptr; }
  const cluster::ShardDirectory* directory() const { return directory_; }
  // The call carries `dictlog-route: direct`.
  static bool Direct(const grpc::ServerContext& context);
  // The partition of a pool; of an id's pool ("<pool>/<seq>"), -1 if the id has no '/'
  // (the engine rejects it) or when not enabled().
  int32_t PartitionOfPool(absl::string_view pool) const;
  int32_t PartitionOfId(absl::string_view id) const;
  cluster::Placement Place(int32_t partition) const { return directory_->Place(partition); }

  // The ids of one multi-id read by where they go: indices into the request.
  struct Split {
    std::vector<size_t> here;  // Served here (also ids the engine will reject).
    std::vector<std::pair<cluster::Placement, std::vector<size_t>>> elsewhere;  // By partition.
  };
  Split SplitIds(const std::vector<std::string>& ids) const;

  // How long a forwarded call may take on a replica that is not the last: kCall, at
  // most the attempt timeout (Forward); kStream, the caller's whole deadline
  // (ForwardStream: a Scan runs as long as its records take to send).
  enum class Span { kCall, kStream };

  // nullopt when this node serves `partition` (or it is -1, or single node); else the
  // answer: NotServedHere for a direct call, or the forwarded call's.
  std::optional<grpc::Status> Route(const grpc::ServerContext& caller, int32_t partition,
                                    absl::string_view method, const PeerCall& call,
                                    Span span = Span::kCall) const;

  // FAILED_PRECONDITION carrying NotServedHere{partition, addresses, epoch}; counted.
  grpc::Status NotServedHere(const cluster::Placement& placement) const;

  // Whether a call may be made again on another replica after one whose outcome is
  // unknown (it timed out, or the connection failed mid-call). Reads may; appends may
  // not: the first replica could have stored them.
  enum class Repeat { kAllowed, kOnlyIfRefused };

  // Makes `call` on a replica of `placement` (in order) until one answers something
  // other than UNAVAILABLE, FAILED_PRECONDITION or CANCELLED (of the peer, not of the
  // caller) or DEADLINE_EXCEEDED of its attempt while the caller's deadline lasts;
  // counts it under `method`. With
  // Repeat::kOnlyIfRefused only a NotServedHere (refused before doing anything) moves to
  // the next replica, and a first attempt that timed out within the caller's deadline
  // answers UNAVAILABLE saying the call may have been applied.
  grpc::Status Forward(const grpc::ServerContext& caller, const cluster::Placement& placement,
                       absl::string_view method, const PeerCall& call,
                       Repeat repeat = Repeat::kAllowed) const;
  // Forward for a stream that lasts as long as its caller wants (Follow, Scan): every replica
  // gets the caller's whole deadline (no attempt timeout), and the call to the replica
  // is cancelled with the caller's (grpc::ClientContext::FromServerContext), so a
  // caller that goes away ends the replica's stream too.
  grpc::Status ForwardStream(const grpc::ServerContext& caller,
                             const cluster::Placement& placement, absl::string_view method,
                             const PeerCall& call) const;

 private:
  std::shared_ptr<grpc::Channel> ChannelTo(const std::string& address) const;
  // `addresses` with those noted unresponsive lately moved to the end (stable).
  std::vector<std::string> RespondingFirst(const std::vector<std::string>& addresses) const
      ABSL_LOCKS_EXCLUDED(mu_);
  void NoteUnresponsive(const std::string& address) const ABSL_LOCKS_EXCLUDED(mu_);
  // Forward's and ForwardStream's loop; `stream` as ForwardStream.
  grpc::Status ForwardTo(const grpc::ServerContext& caller, const cluster::Placement& placement,
                         absl::string_view method, const PeerCall& call, Repeat repeat,
                         bool stream) const;

  const cluster::ShardDirectory* const directory_;
  const std::shared_ptr<grpc::ChannelCredentials> credentials_;
  const absl::Duration attempt_timeout_;
  const absl::Duration avoid_unresponsive_for_;
  mutable absl::Mutex mu_;
  mutable absl::flat_hash_map<std::string, std::shared_ptr<grpc::Channel>> channels_
      ABSL_GUARDED_BY(mu_);
  // Replicas that did not answer a forwarded call, until when they are tried last.
  mutable absl::flat_hash_map<std::string, absl::Time> avoid_until_ ABSL_GUARDED_BY(mu_);
};

}  // namespace dictlog::service

#endif  // DICTLOG_SERVER_SERVICE_READ_ROUTER_H_
