// LogStoreService: the dictlog.v1.LogStore gRPC service, a thin layer that converts
// requests into LogEngine calls and statuses into gRPC statuses.
//
// Every method first checks the caller through CallAuth (reader for reads, writer for
// appends) and, for tokens limited to categories, the categories involved: a refused
// call writes nothing and returns no record of a category it may not see.
//
// In cluster mode a read of a partition this node does not serve is routed by the
// ReadRouter (read_router.h): NotServedHere for `dictlog-route: direct` calls, else
// forwarded; MultiGet and MultiGetFrames split by partition and merge in request order.
// An Append or AppendBatch of such a partition is forwarded to a serving replica
// (append_router.h), or written here when none is live.
//
// Thread safety: gRPC calls its methods concurrently; it holds no state of its own.
// The engine slot and the authorizer are borrowed and must outlive the service;
// calls get UNAVAILABLE while the slot is empty (the store is opening).
#ifndef DICTLOG_SERVER_SERVICE_LOG_STORE_SERVICE_H_
#define DICTLOG_SERVER_SERVICE_LOG_STORE_SERVICE_H_

#include <optional>
#include <string>
#include <vector>

#include "proto/dictlog.grpc.pb.h"
#include "server/auth/authorizer.h"
#include "server/engine/log_engine.h"
#include "server/service/call_auth.h"
#include "server/service/engine_slot.h"
#include "server/service/read_router.h"

namespace dictlog::service {

class LogStoreService final : public v1::LogStore::Service {
 public:
  // `authorizer` nullptr: no authentication.
  // `router` nullptr: every read is served here.
  explicit LogStoreService(const EngineSlot* engine,
                           const auth::Authorizer* authorizer = nullptr,
                           const ReadRouter* router = nullptr)
      : engine_(*engine), auth_(authorizer), router_(router) {}

  grpc::Status Append(grpc::ServerContext* context, const v1::AppendRequest* request,
                      v1::AppendResponse* response) override;
  grpc::Status AppendBatch(grpc::ServerContext* context,
                           const v1::AppendBatchRequest* request,
                           v1::AppendBatchResponse* response) override;
  grpc::Status Get(grpc::ServerContext* context, const v1::GetRequest* request,
                   v1::GetResponse* response) override;
  grpc::Status MultiGet(grpc::ServerContext* context, const v1::MultiGetRequest* request,
                        v1::MultiGetResponse* response) override;
  // With request->frames, ScanFrames under MultiGetFrames' frame rule.
  grpc::Status Scan(grpc::ServerContext* context, const v1::ScanRequest* request,
                    grpc::ServerWriter<v1::ScanResponse>* writer) override;
  grpc::Status GetFrame(grpc::ServerContext* context, const v1::GetRequest* request,
                        v1::GetFrameResponse* response) override;
  // Scan's authorization (a limited token follows a category it may read, not a
  // pool); holds its handler thread until the client cancels or the server shuts down.
  // In cluster mode a pool this node does not serve is streamed from a replica that
  // does (follow_proxy.h), or NotServedHere for `dictlog-route: direct`.
  grpc::Status Follow(grpc::ServerContext* context, const v1::FollowRequest* request,
                      grpc::ServerWriter<v1::FollowResponse>* writer) override;
  // MultiGet's rules; frames only of pools whose every category the token may read
  // (payloads otherwise: frame sizes are a side channel, read_scope.h).
  grpc::Status MultiGetFrames(grpc::ServerContext* context,
                              const v1::MultiGetFramesRequest* request,
                              v1::MultiGetFramesResponse* response) override;
  // Readers may call it. A single node answers `partitions` 0 (docs/cluster.md "Shard
  // map"); a cluster node its view of dictlog.meta.
  grpc::Status GetShardMap(grpc::ServerContext* context, const v1::GetShardMapRequest* request,
                           v1::ShardMap* response) override;

 private:
  // MultiGet / MultiGetFrames whose ids lie (partly) on partitions not served here.
  grpc::Status MultiGetAcross(grpc::ServerContext* context, const auth::Grant& grant,
                              const std::vector<std::string>& ids,
                              const ReadRouter::Split& split, v1::MultiGetResponse* response);
  grpc::Status MultiGetFramesAcross(grpc::ServerContext* context, const auth::Grant& grant,
                                    const v1::MultiGetFramesRequest& request,
                                    const ReadRouter::Split& split,
                                    v1::MultiGetFramesResponse* response);
  // The router's answer for `partition` if it is not served here (read_router.h).
  std::optional<grpc::Status> Route(grpc::ServerContext* context, int32_t partition,
                                    absl::string_view method, const ReadRouter::PeerCall& call,
                                    ReadRouter::Span span = ReadRouter::Span::kCall) const;

  const EngineSlot& engine_;
  const CallAuth auth_;
  const ReadRouter* const router_;
};

}  // namespace dictlog::service

#endif  // DICTLOG_SERVER_SERVICE_LOG_STORE_SERVICE_H_
