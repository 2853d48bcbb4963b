// CancellingPeer (tests only): a gRPC LogStore server on 127.0.0.1 port 0 that answers
// every Get, MultiGet and Append CANCELLED, as a dictlogd shutting down (SIGTERM) does
// to the calls in flight, and counts them.
//
// Thread safety: calls() may be read from any thread; the server stops when it is
// destroyed.
#ifndef DICTLOG_SERVER_SERVICE_CANCELLING_PEER_H_
#define DICTLOG_SERVER_SERVICE_CANCELLING_PEER_H_

#include <grpcpp/server.h>

#include <memory>
#include <string>

namespace dictlog::service {

class CancellingPeer {
 public:
  CancellingPeer();
  ~CancellingPeer();
  CancellingPeer(const CancellingPeer&) = delete;
  CancellingPeer& operator=(const CancellingPeer&) = delete;

  // "127.0.0.1:PORT"; empty if the server did not start.
  const std::string& address() const { return address_; }
  // The calls it answered.
  int calls() const;

 private:
  class Service;
  std::unique_ptr<Service> service_;
  std::unique_ptr<grpc::Server> server_;
  std::string address_;
};

}  // namespace dictlog::service

#endif  // DICTLOG_SERVER_SERVICE_CANCELLING_PEER_H_
