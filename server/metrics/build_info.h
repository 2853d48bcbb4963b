// What dictlogd runs with: dictlog's version and, as the libraries report them at run
// time (not their headers at build time), zstd's, gRPC's and RocksDB's. Shown by
// --version, logged at start and exported as the dictlog_build_info metric.
// Thread-safe.
#ifndef DICTLOG_SERVER_METRICS_BUILD_INFO_H_
#define DICTLOG_SERVER_METRICS_BUILD_INFO_H_

#include <vector>

#include "common/command_line.h"

namespace dictlog::service {

// zstd, gRPC and RocksDB, in that order.
std::vector<LibraryVersion> ServerLibraries();

}  // namespace dictlog::service

#endif  // DICTLOG_SERVER_METRICS_BUILD_INFO_H_
