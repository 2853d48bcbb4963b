#include "server/metrics/build_info.h"

#include <zstd.h>

#include "grpcpp/grpcpp.h"
#include "rocksdb/version.h"

namespace dictlog::service {

std::vector<LibraryVersion> ServerLibraries() {
  return {{"zstd", ZSTD_versionString()},
          {"gRPC", grpc::Version()},
          {"RocksDB", rocksdb::GetRocksVersionAsString()}};
}

}  // namespace dictlog::service
