// FrozenPeer (frozen_peer.h).
#include "server/service/frozen_peer.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

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

}  // namespace dictlog::service
