// RenderEngineMetrics: the LogEngine's state as Prometheus families, read at scrape
// time: per-pool records, raw and stored bytes, ratio, reads and dictionaries; the
// dictionary cache; re-compression progress; a few RocksDB properties.
//
// Thread safety: as the engine's (all its methods may be called concurrently).
#ifndef DICTLOG_SERVER_METRICS_ENGINE_METRICS_H_
#define DICTLOG_SERVER_METRICS_ENGINE_METRICS_H_

#include <string>

#include "server/engine/log_engine.h"

#include "server/metrics/rpc_metrics.h"
#include "server/metrics/text_writer.h"

namespace dictlog::service {

void RenderEngineMetrics(const engine::LogEngine& engine, metrics::TextWriter* out);

// A whole scrape: dictlog_store_open (0 while the store opens, i.e. `engine` is null),
// the RPC metrics, and the engine's once it is open.
std::string RenderMetrics(const engine::LogEngine* engine, const metrics::RpcMetrics& rpc);

}  // namespace dictlog::service

#endif  // DICTLOG_SERVER_METRICS_ENGINE_METRICS_H_
