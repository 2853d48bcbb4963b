#include "server/metrics/engine_metrics.h"

#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_replace.h"
#include "server/metrics/build_info.h"

namespace dictlog::service {
namespace {

using metrics::Labels;
using metrics::TextWriter;

// One gauge or counter family with one sample per pool.
template <typename Value>
void PerPool(const std::vector<v1::PoolInfo>& pools, const char* name, const char* type,
             const char* help, Value value, TextWriter* out) {
  out->Family(name, type, help);
  for (const v1::PoolInfo& pool : pools) {
    out->Sample(name, {{"pool", pool.name()}}, static_cast<double>(value(pool)));
  }
}

void RenderPools(const engine::LogEngine& engine, const std::vector<v1::PoolInfo>& pools,
                 TextWriter* out) {
  using P = const v1::PoolInfo&;
  PerPool(pools, "dictlog_pool_records", "gauge", "Records stored in the pool.",
          [](P p) { return p.stats().records(); }, out);
  PerPool(pools, "dictlog_pool_raw_bytes", "gauge", "Payload bytes stored in the pool.",
          [](P p) { return p.stats().raw_bytes(); }, out);
  PerPool(pools, "dictlog_pool_stored_bytes", "gauge",
          "Stored value bytes of the pool's records (frames, blocks, headers).",
          [](P p) { return p.stats().stored_bytes(); }, out);
  PerPool(pools, "dictlog_pool_compression_ratio", "gauge",
          "Raw bytes / stored bytes of the pool (0 while empty).",
          [](P p) {
            return p.stats().stored_bytes() == 0
                       ? 0.0
                       : static_cast<double>(p.stats().raw_bytes()) /
                             static_cast<double>(p.stats().stored_bytes());
          },
          out);
  PerPool(pools, "dictlog_pool_reads_total", "counter",
          "Records of the pool read (Get, MultiGet, Scan) since the server started.",
          [](P p) { return p.reads(); }, out);
  PerPool(pools, "dictlog_pool_active_dictionary_id", "gauge",
          "Id of the pool's active dictionary (0: none trained yet).",
          [](P p) { return p.active_dictionary_id(); }, out);
  PerPool(pools, "dictlog_pool_drift_recent_ratio", "gauge",
          "Raw / stored bytes of the pool's recent appends with its active dictionary "
          "(the drift window; 0 while not measured).",
          [](P p) { return p.drift_recent_ratio(); }, out);
  PerPool(pools, "dictlog_pool_drift_activation_ratio", "gauge",
          "The ratio the pool's active dictionary was activated with (its evaluation; "
          "0 while unknown).",
          [](P p) { return p.drift_activation_ratio(); }, out);
  PerPool(pools, "dictlog_pool_drift_degraded_percent", "gauge",
          "How many percent the recent ratio is below the activation ratio (negative: "
          "better; 0 while not measured).",
          [](P p) { return p.drift_degraded_percent(); }, out);
  PerPool(pools, "dictlog_pool_drift_retrains_total", "counter",
          "Retrainings that drift started for the pool since the server started.",
          [](P p) { return p.drift_retrains(); }, out);
  PerPool(pools, "dictlog_pool_damaged_at_open", "gauge",
          "1 if the pool's newest records could not be read when the store opened: it "
          "went on from its seq lease and reads of the damaged records are DATA_LOSS "
          "(docs/operations.md); 0 otherwise.",
          [](P p) { return p.damaged_at_open().empty() ? 0 : 1; }, out);
  absl::StatusOr<v1::ListDictionariesResponse> dictionaries =
      engine.ListDictionaries(v1::ListDictionariesRequest());
  if (!dictionaries.ok()) return;
  out->Family("dictlog_pool_dictionaries", "gauge",
              "Dictionary versions stored for the pool (trained or imported).");
  for (const v1::PoolInfo& pool : pools) {
    int count = 0;
    for (const v1::DictionaryInfo& d : dictionaries->dictionaries()) {
      count += d.pool() == pool.name() ? 1 : 0;
    }
    out->Sample("dictlog_pool_dictionaries", {{"pool", pool.name()}}, count);
  }
}

void RenderCache(const v1::DictionaryCacheStats& cache, TextWriter* out) {
  const struct {
    const char* name;
    const char* type;
    uint64_t value;
    const char* help;
  } rows[] = {
      {"dictlog_dictionary_cache_hits_total", "counter", cache.hits(),
       "Dictionary lookups served from the decoded-dictionary cache."},
      {"dictlog_dictionary_cache_misses_total", "counter", cache.misses(),
       "Dictionary lookups that had to load and build a dictionary."},
      {"dictlog_dictionary_cache_builds_total", "counter", cache.builds(),
       "Decoded dictionaries built."},
      {"dictlog_dictionary_cache_evictions_total", "counter", cache.evictions(),
       "Decoded dictionaries evicted to stay within the budget."},
      {"dictlog_dictionary_cache_bytes", "gauge", cache.bytes(),
       "Memory held by decoded dictionaries."},
      {"dictlog_dictionary_cache_entries", "gauge", cache.entries(),
       "Decoded dictionaries held."},
      {"dictlog_dictionary_cache_pinned", "gauge", cache.pinned(),
       "Decoded dictionaries pinned (each pool's active one)."},
      {"dictlog_dictionary_cache_budget_bytes", "gauge", cache.budget_bytes(),
       "Memory budget of the cache (--dictionary_cache_bytes)."},
  };
  for (const auto& row : rows) {
    out->Family(row.name, row.type, row.help);
    out->Sample(row.name, {}, static_cast<double>(row.value));
  }
}

void RenderRecompress(const engine::LogEngine& engine,
                      const std::vector<v1::PoolInfo>& pools, TextWriter* out) {
  std::vector<v1::RecompressStatus> jobs;
  for (const v1::PoolInfo& pool : pools) {
    v1::RecompressRequest request;
    request.set_pool(pool.name());
    absl::StatusOr<v1::RecompressStatus> status = engine.GetRecompressStatus(request);
    if (status.ok() && status->state() != v1::RecompressStatus::NONE) {
      jobs.push_back(*status);
    }
  }
  out->Family("dictlog_recompress_running", "gauge",
              "1 while the pool's re-compression job runs, else 0.");
  for (const auto& job : jobs) {
    out->Sample("dictlog_recompress_running", {{"pool", job.pool()}},
                job.state() == v1::RecompressStatus::RUNNING ? 1 : 0);
  }
  out->Family("dictlog_recompress_records_done", "gauge",
              "Records the pool's latest re-compression job has processed.");
  for (const auto& job : jobs) {
    out->Sample("dictlog_recompress_records_done", {{"pool", job.pool()}},
                static_cast<double>(job.records_done()));
  }
  out->Family("dictlog_recompress_records_planned", "gauge",
              "Records the pool's latest re-compression job covers.");
  for (const auto& job : jobs) {
    out->Sample("dictlog_recompress_records_planned", {{"pool", job.pool()}},
                static_cast<double>(job.records_total()));
  }
  out->Family("dictlog_recompress_unreadable", "gauge",
              "Stored records (or blocks) the pool's latest re-compression job could not "
              "read (DATA_LOSS) and left as stored; `dictlog recompress --pool=P "
              "--status` lists the first.");
  for (const auto& job : jobs) {
    out->Sample("dictlog_recompress_unreadable", {{"pool", job.pool()}},
                static_cast<double>(job.unreadable()));
  }
}

void RenderAutoTraining(const dictionary::AutoTrainerStats& stats, TextWriter* out) {
  out->Family("dictlog_auto_training_queued", "gauge",
              "Pools waiting for an automatic training (first or growth).");
  out->Sample("dictlog_auto_training_queued", {}, static_cast<double>(stats.queued));
  out->Family("dictlog_auto_training_running", "gauge",
              "1 while an automatic training runs, else 0.");
  out->Sample("dictlog_auto_training_running", {}, stats.training ? 1 : 0);
  out->Family("dictlog_auto_trainings_total", "counter",
              "Automatic trainings finished, by result: activated, not_activated (gain "
              "below --activation_min_gain), failed.");
  out->Sample("dictlog_auto_trainings_total", {{"result", "activated"}},
              static_cast<double>(stats.activated));
  out->Sample("dictlog_auto_trainings_total", {{"result", "not_activated"}},
              static_cast<double>(stats.not_activated));
  out->Sample("dictlog_auto_trainings_total", {{"result", "failed"}},
              static_cast<double>(stats.failed));
}

void RenderRocksDb(const engine::LogEngine& engine, TextWriter* out) {
  for (const char* property :
       {"rocksdb.estimate-live-data-size", "rocksdb.total-sst-files-size",
        "rocksdb.cur-size-all-mem-tables", "rocksdb.estimate-num-keys",
        "rocksdb.estimate-pending-compaction-bytes"}) {
    const std::string name = absl::StrReplaceAll(
        std::string("dictlog_") + property, {{".", "_"}, {"-", "_"}});
    out->Family(name, "gauge",
                std::string("RocksDB property ") + property + ", per column family.");
    for (const auto& [family, value] : engine.StoreProperty(property)) {
      out->Sample(name, {{"family", family}}, static_cast<double>(value));
    }
  }
  // DB-wide: every family reports the same value; the first is enough.
  for (const char* property :
       {"rocksdb.num-running-compactions", "rocksdb.num-running-flushes",
        "rocksdb.background-errors", "rocksdb.block-cache-capacity",
        "rocksdb.block-cache-usage"}) {
    const std::string name = absl::StrReplaceAll(
        std::string("dictlog_") + property, {{".", "_"}, {"-", "_"}});
    const auto values = engine.StoreProperty(property);
    if (values.empty()) continue;
    out->Family(name, "gauge", std::string("RocksDB property ") + property + ".");
    out->Sample(name, {}, static_cast<double>(values.front().second));
  }
}

// Retention passes, and the records and stored bytes it expired per pool.
void RenderRetention(const engine::RetentionStats& stats, TextWriter* out) {
  out->Family("dictlog_retention_runs_total", "counter",
              "Passes of the retention job over the pools since the server started.");
  out->Sample("dictlog_retention_runs_total", {}, static_cast<double>(stats.runs));
  out->Family("dictlog_retention_compactions_total", "counter",
              "Compactions of expired ranges (one per pool when its backlog is drained).");
  out->Sample("dictlog_retention_compactions_total", {},
              static_cast<double>(stats.compactions));
  out->Family("dictlog_retention_expired_records_total", "counter",
              "Records of the pool deleted by retention since the server started.");
  for (const auto& [pool, expired] : stats.expired) {
    out->Sample("dictlog_retention_expired_records_total", {{"pool", pool}},
                static_cast<double>(expired.records));
  }
  out->Family("dictlog_retention_expired_bytes_total", "counter",
              "Stored bytes of the pool deleted by retention since the server started.");
  for (const auto& [pool, expired] : stats.expired) {
    out->Sample("dictlog_retention_expired_bytes_total", {{"pool", pool}},
                static_cast<double>(expired.stored_bytes));
  }
}

// Follow streams: connected now, fallen behind and records sent since start.
void RenderFollows(const engine::FollowStats& stats, TextWriter* out) {
  out->Family("dictlog_followers", "gauge", "Follow streams (tail -f) connected now.");
  out->Sample("dictlog_followers", {}, static_cast<double>(stats.connected));
  out->Family("dictlog_follow_fell_behind_total", "counter",
              "Follow streams ended because their buffer overflowed (ABORTED \"fell "
              "behind\") since the server started.");
  out->Sample("dictlog_follow_fell_behind_total", {}, static_cast<double>(stats.fell_behind));
  out->Family("dictlog_follow_records_sent_total", "counter",
              "Records sent to Follow streams since the server started.");
  out->Sample("dictlog_follow_records_sent_total", {}, static_cast<double>(stats.records_sent));
}

// dictlog_build_info{version,zstd,grpc,rocksdb} 1: what this server runs with.
void RenderBuildInfo(TextWriter* out) {
  Labels labels = {{"version", kDictlogVersion}};
  for (const LibraryVersion& library : ServerLibraries()) {
    labels.emplace_back(absl::AsciiStrToLower(library.name), library.version);
  }
  out->Family("dictlog_build_info", "gauge",
              "1, labelled with dictlog's version and the run-time versions of zstd, "
              "gRPC and RocksDB.");
  out->Sample("dictlog_build_info", labels, 1);
}

}  // namespace

void RenderEngineMetrics(const engine::LogEngine& engine, TextWriter* out) {
  const std::vector<v1::PoolInfo> pools = engine.ListPools();
  RenderPools(engine, pools, out);
  RenderCache(engine.DictionaryCacheStats(), out);
  RenderRecompress(engine, pools, out);
  RenderAutoTraining(engine.AutoTrainingStats(), out);
  RenderRetention(engine.RetentionStatistics(), out);
  out->Family("dictlog_pools_deleted_total", "counter",
              "Pools deleted (Admin.DeletePool) since the server started.");
  out->Sample("dictlog_pools_deleted_total", {}, static_cast<double>(engine.PoolsDeleted()));
  out->Family("dictlog_records_raw_before_dictionary_total", "counter",
              "Records stored uncompressed before their pool's first dictionary "
              "(--raw_before_dictionary_bytes), since the server started.");
  out->Sample("dictlog_records_raw_before_dictionary_total", {},
              static_cast<double>(engine.RawBeforeDictionaryRecords()));
  RenderFollows(engine.FollowStatistics(), out);
  RenderRocksDb(engine, out);
  out->Family("dictlog_wal_recovery_drops", "gauge",
              "Damaged or cut write-ahead log records the store's last open stopped its "
              "replay at (RocksDB's reports; the writes logged from there on were lost), "
              "plus 1 if writes acknowledged as synced were missing without such a report "
              "(a log deleted, or cut between two records). Normally 0 after a clean "
              "shutdown or a process crash.");
  const store::WalDrops& dropped = engine.WalDroppedAtOpen();
  out->Sample("dictlog_wal_recovery_drops", {},
              static_cast<double>(dropped.reports +
                                  (dropped.synced_writes_lost && dropped.reports == 0 ? 1 : 0)));
  out->Family("dictlog_dictionaries_unreadable_at_open", "gauge",
              "1 if stored dictionaries could not be read when the store opened (a damaged "
              "table block; the server's start-up WARNING names their ids): records that "
              "name them read as DATA_LOSS. 0 otherwise.");
  out->Sample("dictlog_dictionaries_unreadable_at_open", {},
              engine.DictionariesUnreadableAtOpen().ok() ? 0 : 1);
  out->Family("dictlog_store_writes_stopped", "gauge",
              "1 while RocksDB refuses the store's writes after a failed background flush, "
              "compaction or log write (dictlogd's WARNING says which, and the file: a full "
              "disk, or a damaged table block a compaction met); reads go on. 0 otherwise.");
  out->Sample("dictlog_store_writes_stopped", {}, engine.WritesStopped().ok() ? 0 : 1);
}

std::string RenderMetrics(const engine::LogEngine* engine, const metrics::RpcMetrics& rpc) {
  TextWriter out;
  RenderBuildInfo(&out);
  out.Family("dictlog_store_open", "gauge",
             "1 once the store is open and calls are served, 0 while it opens.");
  out.Sample("dictlog_store_open", {}, engine != nullptr ? 1 : 0);
  rpc.Render(&out);
  if (engine != nullptr) RenderEngineMetrics(*engine, &out);
  return out.text();
}

}  // namespace dictlog::service
