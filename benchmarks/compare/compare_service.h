// CompareLogStore: dictlog.v1.LogStore over a Backend, the same gRPC front end the
// comparison's baselines share with dictlogd. Append, AppendBatch, Get and MultiGet
// are served; Scan and GetFrame return UNIMPLEMENTED (the base class's answer).
//
// Thread safety: called by gRPC from many threads; the backend is borrowed, must be
// thread-safe and outlive the service.
#ifndef DICTLOG_BENCHMARKS_COMPARE_COMPARE_SERVICE_H_
#define DICTLOG_BENCHMARKS_COMPARE_COMPARE_SERVICE_H_

#include <cstddef>

#include "benchmarks/compare/backend.h"
#include "proto/dictlog.grpc.pb.h"

namespace dictlog::compare {

struct ServiceLimits {
  // Most records in one AppendBatch, ids in one MultiGet (dictlogd's defaults).
  size_t max_batch_records = 10000;
  size_t max_multiget_ids = 10000;
};

class CompareLogStore final : public v1::LogStore::Service {
 public:
  CompareLogStore(Backend* backend, ServiceLimits limits)
      : backend_(backend), limits_(limits) {}

  grpc::Status Append(grpc::ServerContext* context, const v1::AppendRequest* request,
                      v1::AppendResponse* response) override;
  // INVALID_ARGUMENT for an empty or too large batch.
  grpc::Status AppendBatch(grpc::ServerContext* context,
                           const v1::AppendBatchRequest* request,
                           v1::AppendBatchResponse* response) override;
  grpc::Status Get(grpc::ServerContext* context, const v1::GetRequest* request,
                   v1::GetResponse* response) override;
  // INVALID_ARGUMENT for too many ids; a bad or missing id fails only its result.
  grpc::Status MultiGet(grpc::ServerContext* context, const v1::MultiGetRequest* request,
                        v1::MultiGetResponse* response) override;

 private:
  Backend* backend_;
  const ServiceLimits limits_;
};

}  // namespace dictlog::compare

#endif  // DICTLOG_BENCHMARKS_COMPARE_COMPARE_SERVICE_H_
