// FrozenPeer (frozen_peer.h).
#include "server/service/frozen_peer.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "absl/time/clock.h"

namespace dictlog::service {

FrozenPeer::FrozenPeer() {
  fd_ = socket(AF_INET, SOCK_STREAM, 0);
  if (fd_ < 0) return;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  if (bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
      listen(fd_, 16) != 0 ||
      getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    return;
  }
  address_ = "127.0.0.1:" + std::to_string(ntohs(address.sin_port));
}

FrozenPeer::~FrozenPeer() {
  if (fd_ >= 0) close(fd_);
}

void ObserveFrozenFirstReplica(cluster::ShardDirectory* directory,
                               const std::string& frozen_address) {
  cluster::AssignmentRecord assignment;
  for (const char* node : {"a", "f", "b"}) assignment.add_nodes(node);
  assignment.set_replicas(2);
  assignment.set_epoch(2);
  directory->ObserveAssignment(assignment);
  cluster::NodeAnnouncement from_f;
  from_f.set_name("f");
  from_f.set_address(frozen_address);
  from_f.set_unix_ms(absl::ToUnixMillis(absl::Now()) + 3'600'000);
  cluster::NodePartition* serving = from_f.add_partitions();
  serving->set_partition(1);
  serving->set_serving(true);
  directory->ObserveAnnouncement(from_f);
}

}  // namespace dictlog::service
