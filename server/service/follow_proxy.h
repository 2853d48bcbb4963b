// FollowProxy: a LogStore.Follow whose pool this node does not serve in cluster mode,
// streamed from a replica that serves it (ADR 0032). The stream to the replica carries
// the caller's token, deadline and cancellation and `dictlog-route: direct`
// (ReadRouter::ForwardStream); each response is read from the replica only once the
// caller's stream took the previous one, so at most one response is held here whatever
// the caller's pace (gRPC's flow control holds the replica back; a caller too slow for
// the replica's buffer gets the replica's ABORTED "fell behind", as from a single node).
//
// A replica that fails (UNAVAILABLE: killed, shutting down, or no longer announced) or
// refuses (NotServedHere) is followed by the next replica of the partition, asked for
// the records after the last one passed on (after_id), so the caller gets each record
// once, in order, across the switch. After a switch that delivered nothing, the
// partition's placement is asked again, at most kMaxIdleRounds times in a row; then
// the caller gets the last answer (UNAVAILABLE: it resumes itself).
//
// A proxied stream holds one of the node's --max_follow_streams (its handler thread),
// and ends at once at shutdown, UNAVAILABLE naming where to resume, as a local one does
// (ProxyStop, stopped by LogEngine::EndFollows).
//
// Thread safety: ProxyFollow runs on the call's thread; the router must outlive it.
// ProxyStop::Stop may be called from any thread.
#ifndef DICTLOG_SERVER_SERVICE_FOLLOW_PROXY_H_
#define DICTLOG_SERVER_SERVICE_FOLLOW_PROXY_H_

#include <grpcpp/server_context.h>
#include <grpcpp/support/sync_stream.h>

#include <cstdint>

#include "absl/synchronization/mutex.h"

#include "proto/dictlog.grpc.pb.h"
#include "server/service/read_router.h"

namespace dictlog::service {

// Rounds over the partition's replicas that deliver nothing before the proxy gives up.
inline constexpr int kMaxIdleRounds = 3;

// Ends a ProxyFollow from another thread: the replica's call is cancelled and the
// caller gets UNAVAILABLE "the server is shutting down; resume after <id>".
class ProxyStop {
 public:
  ProxyStop() = default;
  ProxyStop(const ProxyStop&) = delete;
  ProxyStop& operator=(const ProxyStop&) = delete;

  void Stop();
  bool stopped() const;
  // The replica call now running (null between calls); Stop cancels it.
  void Attach(grpc::ClientContext* peer);

 private:
  mutable absl::Mutex mu_;
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
  grpc::ClientContext* peer_ ABSL_GUARDED_BY(mu_) = nullptr;
};

// Streams `request` (the follow of a pool on `partition`) from serving replicas into
// `writer` until the caller cancels, its deadline passes, `stop` is stopped, or a
// replica's answer is not UNAVAILABLE or FAILED_PRECONDITION (e.g. ABORTED "fell
// behind", which says where to resume).
grpc::Status ProxyFollow(const ReadRouter& router, int32_t partition,
                         grpc::ServerContext* caller, v1::FollowRequest request,
                         grpc::ServerWriter<v1::FollowResponse>* writer, ProxyStop* stop);

}  // namespace dictlog::service

#endif  // DICTLOG_SERVER_SERVICE_FOLLOW_PROXY_H_
