// RouteAppend: where the LogStore append handlers send an Append/AppendBatch in
// cluster mode (docs/cluster.md "Write path", ADR 0025). The writer compresses with
// its pool's dictionary as it applied it from the log, and only the nodes holding a
// partition apply it: so a call whose pools lie on a partition this node does not
// serve is forwarded one hop to a live replica serving it, through the ReadRouter's
// machinery (cached channel per peer, the caller's `authorization` and deadline,
// `dictlog-route: direct`, replicas that did not answer lately tried last, the next
// replica only after a refusal: NotServedHere);
// the holder's answer is the caller's. The request travels unchanged, request id
// included, so the holder's request ids keep retries idempotent.
//
// Appended here instead: single node; a call carrying `dictlog-route: direct` (a
// forwarded one: at most one hop); a partition this node serves; pools on several
// partitions (the engine refuses them); and, counted, a partition no live replica
// serves (the records are stored without the pool's dictionary if this node never
// applied it; correct everywhere, a worse ratio).
//
// Thread safety: a pure function; `router` is borrowed for the call.
#ifndef DICTLOG_SERVER_SERVICE_APPEND_ROUTER_H_
#define DICTLOG_SERVER_SERVICE_APPEND_ROUTER_H_

#include <grpcpp/server_context.h>

#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "server/service/read_router.h"

namespace dictlog::service {

// nullopt: append here. Otherwise the forwarded call's answer. `pools`: the pool each
// record routes to (LogEngine::PoolOfCategory); `router` may be null (single node).
std::optional<grpc::Status> RouteAppend(const ReadRouter* router,
                                        const grpc::ServerContext& caller,
                                        absl::Span<const std::string> pools,
                                        absl::string_view method,
                                        const ReadRouter::PeerCall& call);

}  // namespace dictlog::service

#endif  // DICTLOG_SERVER_SERVICE_APPEND_ROUTER_H_
