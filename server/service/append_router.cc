#include "server/service/append_router.h"

namespace dictlog::service {
namespace {

// The one partition of every pool in `pools`; -1 if there are none or they differ.
int32_t PartitionOfAll(const ReadRouter& router, absl::Span<const std::string> pools) {
  int32_t partition = -1;
  for (size_t i = 0; i < pools.size(); ++i) {
    if (i > 0 && pools[i] == pools[i - 1]) continue;
    const int32_t p = router.PartitionOfPool(pools[i]);
    if (p < 0 || (partition >= 0 && p != partition)) return -1;
    partition = p;
  }
  return partition;
}

}  // namespace

std::optional<grpc::Status> RouteAppend(const ReadRouter* router,
                                        const grpc::ServerContext& caller,
                                        absl::Span<const std::string> pools,
                                        absl::string_view method,
                                        const ReadRouter::PeerCall& call) {
  if (router == nullptr || !router->enabled() || ReadRouter::Direct(caller)) {
    return std::nullopt;
  }
  const int32_t partition = PartitionOfAll(*router, pools);
  if (partition < 0) return std::nullopt;
  const cluster::Placement placement = router->Place(partition);
  if (placement.here) return std::nullopt;
  if (placement.addresses.empty()) {
    router->directory()->CountAppendedWithoutHolder();
    return std::nullopt;
  }
  // Appends are not repeated on another replica after an unknown outcome (a second copy).
  return router->Forward(caller, placement, method, call, ReadRouter::Repeat::kOnlyIfRefused);
}

}  // namespace dictlog::service
