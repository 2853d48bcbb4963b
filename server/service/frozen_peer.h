// FrozenPeer (tests only): a TCP listener on 127.0.0.1 port 0 that accepts connections
// (the kernel's backlog) and never answers, as a SIGSTOPped dictlogd does: gRPC calls
// to it end only at their deadline.
//
// Not thread-safe; the socket closes when it is destroyed.
#ifndef DICTLOG_SERVER_SERVICE_FROZEN_PEER_H_
#define DICTLOG_SERVER_SERVICE_FROZEN_PEER_H_

#include <string>

#include "server/cluster/shard_directory.h"

namespace dictlog::service {

class FrozenPeer {
 public:
  FrozenPeer();
  ~FrozenPeer();
  FrozenPeer(const FrozenPeer&) = delete;
  FrozenPeer& operator=(const FrozenPeer&) = delete;

  // "127.0.0.1:PORT"; empty if the socket could not be set up.
  const std::string& address() const { return address_; }

 private:
  int fd_ = -1;
  std::string address_;
};

// Makes `directory` follow nodes a, f, b with 2 replicas and take f, announced live at
// `frozen_address` and serving partition 1, as partition 1's first replica (b second).
void ObserveFrozenFirstReplica(cluster::ShardDirectory* directory,
                               const std::string& frozen_address);

}  // namespace dictlog::service

#endif  // DICTLOG_SERVER_SERVICE_FROZEN_PEER_H_
