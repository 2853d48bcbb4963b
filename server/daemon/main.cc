// dictlogd: the dictlog server. Opens (or creates) the store under --data_dir and
// serves dictlog.v1.LogStore, dictlog.v1.Admin, grpc.health.v1 and server reflection
// on --listen until SIGTERM or SIGINT, then drains calls in flight and exits 0.
// Health reports NOT_SERVING while the store opens and while draining; Prometheus
// metrics are served on --metrics_listen.
#include <signal.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <limits>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/ascii.h"
#include "common/atomic_file.h"
#include "common/command_line.h"
#include "common/home_path.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/status_macros.h"
#include "server/auth/authorizer.h"
#include "server/auth/token_scopes.h"
#include "absl/time/clock.h"
#include "server/cluster/cluster_node.h"
#include "server/cluster/partitioning.h"
#include "server/cluster/shard_directory.h"
#include "server/engine/log_engine.h"
#include "server/metrics/http_endpoint.h"
#include "server/metrics/rpc_metrics.h"
#include "server/metrics/build_info.h"
#include "server/service/dictlog_server.h"
#include "server/metrics/cluster_metrics.h"
#include "server/metrics/engine_metrics.h"
#include "server/daemon/open_files.h"
#include "server/daemon/salvage.h"
#include "server/daemon/scope_isolation.h"
#include "server/daemon/server_config.h"

ABSL_FLAG(std::string, listen, "127.0.0.1:7070",
          "host:port to serve gRPC on (port 0 picks a free port)");
ABSL_FLAG(std::string, data_dir, "./data", "directory of the RocksDB store");
ABSL_FLAG(std::string, config, "",
          "server config file: routes, pools, default pool options (protobuf text "
          "format, or JSON if it ends in .json); see docs/configuration.md");
ABSL_FLAG(std::vector<std::string>, route, {},
          "routing rules, comma-separated: CATEGORY=POOL or PREFIX*=POOL; added to "
          "the config file's");
ABSL_FLAG(int, compression_level, 0,
          "zstd level of pools created on first append (1..22 or negative fast "
          "levels); 0 keeps the config's or the built-in default 3");
ABSL_FLAG(int64_t, block_cache_mb, 256,
          "memory for RocksDB's cache of table blocks (stored records, indexes, "
          "filters), in MiB, shared by all pools; the decoded block cache's bytes "
          "come out of it while held");
ABSL_FLAG(std::string, table_compression, "lz4",
          "how RocksDB compresses the record tables' blocks on disk: none, lz4 "
          "or zstd (smallest on disk, slowest block-cache misses); changes apply to "
          "files written from then on");
ABSL_FLAG(int64_t, records_block_bytes, 4096,
          "size of the record tables' blocks before compression, 256..65536 bytes: a "
          "read that misses the block cache reads and decompresses one such block "
          "(smaller: cheaper misses, larger files); changes apply to files written "
          "from then on (ADR 0033)");
ABSL_FLAG(bool, sync_writes, false,
          "fsync the write-ahead log before acknowledging an append (group commit)");
ABSL_FLAG(int64_t, max_record_bytes, 1 << 20, "largest payload accepted, in bytes");
ABSL_FLAG(int64_t, max_batch_records, 10000, "most records in one AppendBatch");
ABSL_FLAG(int, encode_threads, 0,
          "threads that compress one large append, the calling one included (0: "
          "min(2, hardware threads); 1: the calling thread alone)");
ABSL_FLAG(int64_t, parallel_encode_min_bytes, 64 << 10,
          "appends with at least this many payload bytes compress on --encode_threads");
ABSL_FLAG(int64_t, max_multiget_ids, 10000, "most ids in one MultiGet");
ABSL_FLAG(int64_t, max_response_bytes, 64 << 20,
          "most payload bytes one MultiGet returns (duplicated ids count each time); "
          "the ids past it get a RESOURCE_EXHAUSTED result each, to ask again for");
ABSL_FLAG(int64_t, max_import_dictionary_bytes, 1 << 20,
          "largest dictionary ImportDictionary accepts, in bytes (larger: "
          "INVALID_ARGUMENT before it is parsed)");
ABSL_FLAG(int64_t, max_pools, 4096,
          "most pools (counting admin-created ones); an append needing another is "
          "RESOURCE_EXHAUSTED and writes nothing; 0: no limit");
ABSL_FLAG(int64_t, max_categories_per_pool, 1024,
          "most categories routed into one pool besides its own name; an append adding "
          "another is RESOURCE_EXHAUSTED and writes nothing; 0: no limit");
ABSL_FLAG(int, max_request_bytes, 64 << 20,
          "largest gRPC request message, in bytes (larger: RESOURCE_EXHAUSTED)");
ABSL_FLAG(int, max_concurrent_streams, 100,
          "most calls in flight on one client connection; more wait for a slot");
ABSL_FLAG(int64_t, grpc_memory_bytes, int64_t{1} << 30,
          "gRPC resource quota: memory for connections and messages, in bytes");
ABSL_FLAG(int, grpc_max_threads, 128,
          "gRPC resource quota: most handler threads; a call finding none free fails "
          "with RESOURCE_EXHAUSTED");
ABSL_FLAG(int, grpc_idle_threads, 32,
          "handler threads kept waiting for calls when idle (fewer: threads are "
          "created and destroyed per call under concurrent load)");
ABSL_FLAG(bool, auto_train, true,
          "train and activate a first dictionary for a pool once it holds "
          "--auto_train_first_bytes, and grow it (see there)");
ABSL_FLAG(bool, recompress_first_dictionary, true,
          "when automatic training activates a pool's first (or grown) dictionary, "
          "re-encode the records the pool stored before it in the background (throttled by "
          "--recompress_records_per_second)");
ABSL_FLAG(int64_t, raw_before_dictionary_bytes, 64 << 20,
          "with --auto_train and --recompress_first_dictionary, a pool without a "
          "dictionary stores its records uncompressed while it holds less than this "
          "many raw bytes, and its first dictionary's re-encode compresses them once "
          "(a first training that activates nothing compresses them without one); 0: "
          "compress every record at append");
ABSL_FLAG(int, auto_train_min_multiple, 8,
          "automatic training trains a pool's dictionary at full size once the pool "
          "holds this many times the dictionary size");
ABSL_FLAG(int64_t, auto_train_first_bytes, 16384,
          "automatic training gives a pool its first dictionary (sized to the data) "
          "once it holds this many raw bytes, and trains it again at each doubling "
          "until --auto_train_min_multiple x the dictionary size; 0: first training "
          "only at --auto_train_min_multiple x");
ABSL_FLAG(int, auto_train_threads, 2,
          "automatic trainings at once, each of a different pool (at most the machine's "
          "cores); each holds its sample (--sample_budget_multiple x the dictionary size)");
ABSL_FLAG(bool, auto_train_quick_first, false,
          "a pool with no dictionary that already holds --auto_train_min_multiple x the "
          "dictionary size gets its first dictionary from one candidate (fastCover d=8 at "
          "the largest size) instead of up to nine; the full candidate search follows "
          "once its raw bytes have doubled (measured: sooner first dictionaries, but a "
          "second re-encode of the pool; off by default, ADR 0023)");
ABSL_FLAG(bool, auto_train_bulk_policy, true,
          "a training that starts when its pool holds the whole sample budget "
          "(--sample_budget_multiple x the dictionary size) is the pool's last growth "
          "training, however small the pool was when queued; and any automatic "
          "training whose sample supports the configured size (5x it) tries that size "
          "only (ADR 0029, 0050); false: every growth, every size");
ABSL_FLAG(int, auto_train_nice, 10,
          "nice value of the automatic training threads (and of the re-encode jobs they "
          "start), 0..19: background training takes the CPU appends and reads leave "
          "(ADR 0034); 0: as the server's other threads");
ABSL_FLAG(int64_t, drift_window_bytes, 32768,
          "drift signal: the ratio of each pool's last this many payload bytes of appends "
          "with its active dictionary, against the ratio the dictionary was activated "
          "with; a pool's drift_threshold_percent option decides when it retrains");
ABSL_FLAG(double, activation_min_gain, 0.03,
          "a candidate dictionary is activated (automatically, or by TrainDictionary "
          "with activate) only if it beats the active one by at least this fraction");
ABSL_FLAG(int, sample_budget_multiple, 100,
          "training sample: the pool's newest records, up to this many times the "
          "dictionary size");
ABSL_FLAG(int, auto_full_dictionaries, 64,
          "pools in dictionary_mode auto train full dictionaries while at most this "
          "many dictionaries are live, or when they take at least 1/this of all reads; "
          "otherwise compact ones (cheaper to decode when cold)");
ABSL_FLAG(int64_t, dictionary_cache_bytes, 256 << 20,
          "memory budget of decoded dictionaries; each pool's active one is pinned, "
          "others are rebuilt from stored bytes when needed");
ABSL_FLAG(int64_t, decoded_block_cache_bytes, 16 << 20,
          "block mode: memory of indexed blocks kept decompressed for reads that come "
          "back to them (a block is kept on its second read within a short memory of "
          "recent ones); at most half of --block_cache_mb, whose block cache gives up "
          "what this holds; 0: none");
ABSL_FLAG(double, recompress_records_per_second, 50000,
          "throttle of background re-compression");
ABSL_FLAG(std::string, backup_root, "",
          "Backup (`dictlog backup --out=DIR`) writes only new directories strictly "
          "inside this directory (after resolving .. and symbolic links; elsewhere: "
          "PERMISSION_DENIED); empty: backups are off (FAILED_PRECONDITION)");
ABSL_FLAG(std::string, salvage_from, "",
          "salvage: build a new store in --data_dir (a new or empty directory) from "
          "every entry the store in this directory can still read, skipping the key "
          "ranges of damaged table blocks; print what was lost, then exit (0: done). The "
          "damaged store is only read (docs/operations.md, \"Salvaging a damaged "
          "store\")");
ABSL_FLAG(std::string, port_file, "",
          "if set, write the bound port to this file once serving (for tests)");
ABSL_FLAG(int64_t, request_id_window_seconds, 3600,
          "how long an append's client request id is remembered: a retry within it "
          "stores nothing new and returns the first attempt's ids");
ABSL_FLAG(int64_t, retention_interval_seconds, 60,
          "seconds between passes of the retention job, which deletes the oldest "
          "records of pools over their max_age_seconds or max_bytes (0: no job)");
ABSL_FLAG(int64_t, retention_records_per_pass, 10000,
          "most records a retention pass looks at per pool (appends wait while it "
          "decides)");
ABSL_FLAG(int64_t, append_time_resolution_ms, 1000,
          "append times: calls to a pool within the same bucket of this many ms share "
          "the first one's time entry (0: an entry per call; ADR 0015)");
ABSL_FLAG(int64_t, max_follow_streams, 32,
          "most Follow streams (`dictlog tail -f`) at once, in cluster mode those this "
          "node proxies to a replica included; more are refused with "
          "RESOURCE_EXHAUSTED. Each holds a gRPC handler thread: keep it well below "
          "--grpc_max_threads");
ABSL_FLAG(int64_t, follow_buffer_records, 1000,
          "records a Follow stream's buffer holds; a follower further behind ends with "
          "ABORTED \"fell behind\" and resumes after the last id it received");
ABSL_FLAG(int64_t, follow_buffer_bytes, 4 << 20,
          "payload bytes a Follow stream's buffer holds (one record always fits); past "
          "it, as past --follow_buffer_records");
ABSL_FLAG(double, shutdown_notice_seconds, 1,
          "on SIGTERM/SIGINT, health checks report NOT_SERVING for this long while "
          "calls are still served, so load balancers stop sending; then new calls are "
          "refused");
ABSL_FLAG(std::string, tls_cert, "",
          "PEM certificate chain of the server: serve TLS (with --tls_key)");
ABSL_FLAG(std::string, tls_key, "", "PEM private key of --tls_cert");
ABSL_FLAG(std::string, tls_client_ca, "",
          "PEM CA certificate(s): mutual TLS, clients must present a certificate it "
          "signed");
ABSL_FLAG(std::string, peer_tls_ca, "",
          "cluster mode with TLS: PEM CA certificate(s) peer nodes' certificates are "
          "verified against when this node forwards reads to them (each peer's "
          "certificate must name the host of its --advertise_address); empty: the "
          "system's roots");
ABSL_FLAG(bool, insecure, false,
          "serve plaintext on a non-loopback --listen address (plaintext is always "
          "allowed on 127.0.0.0/8, ::1 and localhost); see docs/security.md");
ABSL_FLAG(std::string, tokens_file, "",
          "bearer tokens and their roles (reader, writer, admin) and categories, one "
          "`TOKEN|sha256:HEX ROLE [PATTERN,...]` a line; empty: no authentication; see "
          "docs/security.md");
ABSL_FLAG(bool, isolate_scopes, false,
          "categories of different token scopes (--tokens_file category patterns) never "
          "share a pool or dictionary: refuse routing rules that would mix them at "
          "start-up, and appends that would at run time; see docs/security.md");
ABSL_FLAG(int, shutdown_grace_seconds, 10,
          "on SIGTERM/SIGINT, after the notice, how long calls in flight may take to "
          "finish before they are cancelled");
ABSL_FLAG(std::string, metrics_listen, "",
          "host:port serving Prometheus metrics at GET /metrics (port 0 picks a free "
          "port); empty: off");
ABSL_FLAG(std::string, metrics_token_file, "",
          "file holding the bearer token scrapes of --metrics_listen must send "
          "(`Authorization: Bearer TOKEN`; at least 16 printable characters, "
          "surrounding whitespace ignored); empty: no authentication");
ABSL_FLAG(int, metrics_max_connections, 4,
          "scrape connections served at once; more get 503");
ABSL_FLAG(double, metrics_request_timeout_seconds, 5,
          "total time a scrape connection may take, from accept to the last byte "
          "sent");
ABSL_FLAG(std::string, metrics_port_file, "",
          "if set, write the metrics endpoint's bound port to this file (for tests)");
ABSL_FLAG(std::string, kafka_bootstrap, "",
          "cluster mode (docs/cluster.md): HOST:PORT,... of Kafka brokers; appends are "
          "acknowledged once Kafka has them (acks=all) and every node materializes them "
          "into its own --data_dir; empty: single-node mode");
ABSL_FLAG(std::string, node_name, "dictlogd",
          "cluster mode: this node's name (its Kafka client.id and log lines)");
ABSL_FLAG(std::vector<std::string>, cluster_nodes, {},
          "cluster mode: every node's --node_name, comma-separated, the same list on every "
          "node; each pool's dictionaries are trained automatically by one node picked from "
          "it by the pool's name (docs/cluster.md), and partition p is held by the "
          "--cluster_replicas nodes from position p on. Empty: this node alone (it trains "
          "and holds everything)");
ABSL_FLAG(int, cluster_replicas, 2,
          "cluster mode: nodes of --cluster_nodes holding a copy of each partition of "
          "dictlog.records (partition p: nodes[(p + k) mod n], k < replicas); the others "
          "forward reads of it. 0: every node holds every partition");
ABSL_FLAG(std::string, advertise_address, "",
          "cluster mode: HOST:PORT clients and peer nodes reach this node at (announced in "
          "dictlog.meta, listed by GetShardMap); empty: --listen, which must then name a "
          "host (not 0.0.0.0 or [::]) and a port other than 0");
ABSL_FLAG(int64_t, cluster_announce_interval_ms, 1000,
          "cluster mode: how often this node announces itself (address, progress per "
          "partition) in dictlog.meta; a node silent for 3 intervals is not live");
ABSL_FLAG(int64_t, cluster_forward_attempt_ms, 1000,
          "cluster mode: a read forwarded to a replica that has not answered within this "
          "goes to the next replica (a stopped node still announced live), within the "
          "caller's deadline; the last replica gets the rest of the caller's deadline "
          "(streams, Scan and Follow, get the caller's whole deadline on every replica)");
ABSL_FLAG(int64_t, cluster_max_serving_lag_messages, 10000,
          "cluster mode: a built partition whose lag (messages behind the partition's end) "
          "stays above this for --cluster_serving_lag_grace_ms stops serving here (reads "
          "go to its other replica) until its lag is at most half of it; 0: never");
ABSL_FLAG(int64_t, cluster_serving_lag_grace_ms, 5000,
          "cluster mode: how long a partition's lag must stay above "
          "--cluster_max_serving_lag_messages before it stops serving here");
ABSL_FLAG(int64_t, cluster_rebuild_bytes_per_second, int64_t{32} << 20,
          "cluster mode: bytes of log messages per second this node applies to partitions "
          "it is building (newly held, or after a wiped data directory), all together; "
          "past it it pauses fetching them while the partitions it serves go on; "
          "0: unlimited");
ABSL_FLAG(int64_t, cluster_drop_unheld_after_ms, 600000,
          "cluster mode: a partition this node no longer holds (the assignment moved it) "
          "keeps its records here this long, then they are deleted once the other live "
          "replicas serve it caught up (dictionaries stay; assigned back, it is rebuilt "
          "from the log); 0: never");
ABSL_FLAG(int, kafka_partitions, 8,
          "cluster mode: partitions of topic dictlog.records when dictlogd creates it "
          "(an existing topic must have as many; at most 4096); a pool's records live on "
          "one");
ABSL_FLAG(int, kafka_replication_factor, 3,
          "cluster mode: copies of each partition when dictlogd creates the topics "
          "(min.insync.replicas 2, or 1 with a single copy); an existing topic must match");
ABSL_FLAG(int64_t, kafka_delivery_timeout_ms, 10000,
          "cluster mode: an append Kafka has not acknowledged within this fails "
          "(DEADLINE_EXCEEDED; UNAVAILABLE when brokers or in-sync replicas are missing)");
ABSL_FLAG(int64_t, kafka_apply_wait_ms, 100,
          "cluster mode: a read of an acknowledged id this node has not applied yet "
          "waits this long, then answers UNAVAILABLE");
ABSL_FLAG(bool, mutex_deadlock_detection, false,
          "check every absl::Mutex acquisition for lock-order cycles (Debian's abseil "
          "does by default: ~2.5% of the server's CPU under MultiGet load); for debugging");
ABSL_FLAG(int, open_delay_ms_for_test, 0,
          "tests only: wait this long after binding, before opening the store, so the "
          "NOT_SERVING phase can be observed");
ABSL_FLAG(int64_t, cluster_apply_delay_ms_for_test, 0,
          "tests only: cluster mode: wait this long after applying each log message, so "
          "a node falls behind");
ABSL_FLAG(std::string, open_gate_file_for_test, "",
          "tests only: after binding, wait until this file exists before opening the "
          "store, so the NOT_SERVING phase lasts as long as the test needs");

namespace dictlog {
namespace {

// A numeric flag's name (without "--") and value, for CheckFlags.
struct FlagValue {
  const char* name;
  double value;
};

// INVALID_ARGUMENT naming the first of `flags` that is not positive (or, with
// `allow_zero`, that is negative).
absl::Status CheckFlags(std::initializer_list<FlagValue> flags, bool allow_zero = false) {
  for (const FlagValue& flag : flags) {
    if (flag.value > 0 || (allow_zero && flag.value == 0)) continue;
    return absl::InvalidArgumentError(absl::StrCat(
        "--", flag.name, allow_zero ? " must not be negative" : " must be positive",
        ", not ", flag.value));
  }
  return absl::OkStatus();
}

// Lifts the open-files limit (open_files.h) and says so; RocksDB's share of it.
absl::StatusOr<int> TableFilesAfterRaisingTheLimit() {
  ASSIGN_OR_RETURN(const uint64_t open_files, service::RaiseOpenFilesLimit());
  const int tables = service::TableFilesFor(open_files);
  const std::string limit = open_files == std::numeric_limits<uint64_t>::max()
                                ? "unlimited"
                                : std::to_string(open_files);
  const std::string kept = tables < 0 ? "all its" : absl::StrCat("at most ", tables);
  std::printf("dictlogd: open-files limit %s; RocksDB keeps %s table files open\n",
              limit.c_str(), kept.c_str());
  return tables;
}

absl::StatusOr<engine::EngineOptions> EngineOptionsFromFlags() {
  engine::EngineOptions options;
  options.store.path = absl::GetFlag(FLAGS_data_dir);
  options.store.sync_writes = absl::GetFlag(FLAGS_sync_writes);
  options.store.request_window = absl::Seconds(absl::GetFlag(FLAGS_request_id_window_seconds));
  if (const int64_t mb = absl::GetFlag(FLAGS_block_cache_mb); mb < 0 || mb > (int64_t{1} << 30)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--block_cache_mb must be 0..", int64_t{1} << 30, ", not ", mb));
  }
  absl::StatusOr<store::TableCompression> compression =
      store::ParseTableCompression(absl::GetFlag(FLAGS_table_compression));
  if (!compression.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--table_compression: ", compression.status().message()));
  }
  options.store.records_compression = *compression;
  if (const int64_t bytes = absl::GetFlag(FLAGS_records_block_bytes);
      bytes < int64_t{store::kLeastRecordsBlockBytes} ||
      bytes > int64_t{store::kMostRecordsBlockBytes}) {
    return absl::InvalidArgumentError(absl::StrCat("--records_block_bytes must be ",
                                                   store::kLeastRecordsBlockBytes, "..",
                                                   store::kMostRecordsBlockBytes, ", not ", bytes));
  }
  options.store.records_block_bytes =
      static_cast<size_t>(absl::GetFlag(FLAGS_records_block_bytes));
  options.store.block_cache_bytes = static_cast<size_t>(absl::GetFlag(FLAGS_block_cache_mb))
                                    << 20;
  if (!absl::GetFlag(FLAGS_config).empty()) {
    ASSIGN_OR_RETURN(config::ServerConfig config,
                     service::LoadServerConfig(absl::GetFlag(FLAGS_config)));
    RETURN_IF_ERROR(service::ApplyServerConfig(config, &options));
  }
  for (const std::string& flag : absl::GetFlag(FLAGS_route)) {
    ASSIGN_OR_RETURN(pool::RouteRule rule, service::ParseRouteFlag(flag));
    options.routes.push_back(std::move(rule));
  }
  if (const int level = absl::GetFlag(FLAGS_compression_level); level != 0) {
    v1::PoolOptions update;
    update.set_compression_level(level);
    ASSIGN_OR_RETURN(options.default_pool_options,
                     pool::ApplyPoolOptions(options.default_pool_options, update));
  }
  const int64_t max_record = absl::GetFlag(FLAGS_max_record_bytes);
  const int64_t max_batch = absl::GetFlag(FLAGS_max_batch_records);
  const int64_t max_ids = absl::GetFlag(FLAGS_max_multiget_ids);
  const int64_t max_response = absl::GetFlag(FLAGS_max_response_bytes);
  const int64_t max_import = absl::GetFlag(FLAGS_max_import_dictionary_bytes);
  RETURN_IF_ERROR(CheckFlags({{"max_record_bytes", double(max_record)}}, /*allow_zero=*/true));
  RETURN_IF_ERROR(CheckFlags({{"max_batch_records", double(max_batch)},
                              {"max_multiget_ids", double(max_ids)},
                              {"max_response_bytes", double(max_response)},
                              {"max_import_dictionary_bytes", double(max_import)}}));
  options.max_response_bytes = static_cast<size_t>(max_response);
  options.max_record_bytes = static_cast<size_t>(max_record);
  options.max_batch_records = static_cast<size_t>(max_batch);
  RETURN_IF_ERROR(CheckFlags(
      {{"encode_threads", double(absl::GetFlag(FLAGS_encode_threads))},
       {"parallel_encode_min_bytes", double(absl::GetFlag(FLAGS_parallel_encode_min_bytes))}},
      /*allow_zero=*/true));
  if (const int threads = absl::GetFlag(FLAGS_encode_threads); threads > 64) {
    return absl::InvalidArgumentError(
        absl::StrCat("--encode_threads must be 0..64, not ", threads));
  } else if (threads != 0) {
    options.encode_threads = static_cast<size_t>(threads);
  }
  options.parallel_encode_min_bytes =
      static_cast<uint64_t>(absl::GetFlag(FLAGS_parallel_encode_min_bytes));
  options.max_multiget_ids = static_cast<size_t>(max_ids);
  options.max_import_dictionary_bytes = static_cast<size_t>(max_import);
  options.backup_root = absl::GetFlag(FLAGS_backup_root);
  RETURN_IF_ERROR(CheckFlags(
      {{"max_pools", double(absl::GetFlag(FLAGS_max_pools))},
       {"max_categories_per_pool", double(absl::GetFlag(FLAGS_max_categories_per_pool))}},
      /*allow_zero=*/true));
  options.names.max_pools = static_cast<size_t>(absl::GetFlag(FLAGS_max_pools));
  options.names.max_categories_per_pool =
      static_cast<size_t>(absl::GetFlag(FLAGS_max_categories_per_pool));
  options.auto_train = absl::GetFlag(FLAGS_auto_train);
  options.auto_trainer.min_bytes_multiple = absl::GetFlag(FLAGS_auto_train_min_multiple);
  options.auto_trainer.first_min_bytes =
      static_cast<uint64_t>(std::max<int64_t>(0, absl::GetFlag(FLAGS_auto_train_first_bytes)));
  options.auto_trainer.threads = static_cast<size_t>(std::max(
      1, std::min<int>(absl::GetFlag(FLAGS_auto_train_threads),
                       static_cast<int>(std::max(1u, std::thread::hardware_concurrency())))));
  options.auto_trainer.quick_first = absl::GetFlag(FLAGS_auto_train_quick_first);
  options.auto_trainer.bulk_policy = absl::GetFlag(FLAGS_auto_train_bulk_policy);
  options.auto_trainer.nice = std::clamp(absl::GetFlag(FLAGS_auto_train_nice), 0, 19);
  options.recompress_first_dictionary = absl::GetFlag(FLAGS_recompress_first_dictionary);
  options.raw_before_dictionary_bytes = static_cast<uint64_t>(
      std::max<int64_t>(0, absl::GetFlag(FLAGS_raw_before_dictionary_bytes)));
  options.drift_window_bytes =
      static_cast<uint64_t>(std::max<int64_t>(0, absl::GetFlag(FLAGS_drift_window_bytes)));
  options.dictionaries.activation_min_gain = absl::GetFlag(FLAGS_activation_min_gain);
  options.dictionaries.sample_budget_multiple = absl::GetFlag(FLAGS_sample_budget_multiple);
  options.dictionaries.auto_full_dictionaries =
      static_cast<size_t>(std::max(0, absl::GetFlag(FLAGS_auto_full_dictionaries)));
  options.dictionary_cache.budget_bytes =
      static_cast<size_t>(std::max<int64_t>(0, absl::GetFlag(FLAGS_dictionary_cache_bytes)));
  options.decoded_block_cache_bytes =
      static_cast<size_t>(std::max<int64_t>(0, absl::GetFlag(FLAGS_decoded_block_cache_bytes)));
  options.recompressor.max_records_per_second =
      absl::GetFlag(FLAGS_recompress_records_per_second);
  RETURN_IF_ERROR(CheckFlags(
      {{"auto_train_min_multiple", double(absl::GetFlag(FLAGS_auto_train_min_multiple))},
       {"sample_budget_multiple", double(absl::GetFlag(FLAGS_sample_budget_multiple))},
       {"drift_window_bytes", double(absl::GetFlag(FLAGS_drift_window_bytes))},
       {"recompress_records_per_second",
        double(options.recompressor.max_records_per_second)},
       {"retention_records_per_pass",
        double(absl::GetFlag(FLAGS_retention_records_per_pass))}}));
  RETURN_IF_ERROR(CheckFlags(
      {{"retention_interval_seconds", double(absl::GetFlag(FLAGS_retention_interval_seconds))},
       {"raw_before_dictionary_bytes",
        double(absl::GetFlag(FLAGS_raw_before_dictionary_bytes))},
       {"append_time_resolution_ms", double(absl::GetFlag(FLAGS_append_time_resolution_ms))}},
      /*allow_zero=*/true));
  options.retention.interval = absl::Seconds(absl::GetFlag(FLAGS_retention_interval_seconds));
  options.retention.max_records_per_pass =
      static_cast<size_t>(absl::GetFlag(FLAGS_retention_records_per_pass));
  options.append_time_resolution =
      absl::Milliseconds(absl::GetFlag(FLAGS_append_time_resolution_ms));
  RETURN_IF_ERROR(CheckFlags(
      {{"max_follow_streams", double(absl::GetFlag(FLAGS_max_follow_streams))},
       {"follow_buffer_records", double(absl::GetFlag(FLAGS_follow_buffer_records))},
       {"follow_buffer_bytes", double(absl::GetFlag(FLAGS_follow_buffer_bytes))}}));
  options.follow.max_followers = static_cast<size_t>(absl::GetFlag(FLAGS_max_follow_streams));
  options.follow.buffer_records =
      static_cast<size_t>(absl::GetFlag(FLAGS_follow_buffer_records));
  options.follow.buffer_bytes = static_cast<size_t>(absl::GetFlag(FLAGS_follow_buffer_bytes));
  return options;
}

absl::Status WritePortFile(const std::string& path, int port) {
  return WriteFileAtomically(path, absl::StrCat(port, "\n"));
}

// TLS and plaintext policy from the flags; refuses plaintext off loopback unless
// --insecure.
absl::StatusOr<service::ServerTls> TlsFromFlags(const std::string& listen) {
  ASSIGN_OR_RETURN(service::ServerTls tls,
                   service::LoadServerTls(absl::GetFlag(FLAGS_tls_cert),
                                          absl::GetFlag(FLAGS_tls_key),
                                          absl::GetFlag(FLAGS_tls_client_ca)));
  RETURN_IF_ERROR(
      service::CheckTransport(listen, tls.enabled(), absl::GetFlag(FLAGS_insecure)));
  RETURN_IF_ERROR(service::LoadPeerCa(absl::GetFlag(FLAGS_peer_tls_ca), &tls));
  return tls;
}

absl::StatusOr<std::unique_ptr<auth::Authorizer>> AuthorizerFromFlags() {
  if (absl::GetFlag(FLAGS_tokens_file).empty()) return nullptr;
  return auth::Authorizer::FromFile(absl::GetFlag(FLAGS_tokens_file));
}

// The endpoint's options from the --metrics_* flags; reads --metrics_token_file.
absl::StatusOr<metrics::HttpEndpointOptions> MetricsOptionsFromFlags() {
  metrics::HttpEndpointOptions options;
  options.max_connections = absl::GetFlag(FLAGS_metrics_max_connections);
  const double timeout = absl::GetFlag(FLAGS_metrics_request_timeout_seconds);
  RETURN_IF_ERROR(CheckFlags({{"metrics_max_connections", double(options.max_connections)},
                              {"metrics_request_timeout_seconds", timeout}}));
  options.request_deadline = absl::Seconds(timeout);
  const std::string path = absl::GetFlag(FLAGS_metrics_token_file);
  if (path.empty()) return options;
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  options.bearer_token = std::string(absl::StripAsciiWhitespace(text.str()));
  const bool printable = std::all_of(options.bearer_token.begin(),
                                     options.bearer_token.end(),
                                     [](char c) { return c > ' ' && c < 127; });
  if (options.bearer_token.size() < 16 || !printable) {  // Never print the file.
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": the metrics token needs at least 16 printable characters, no spaces"));
  }
  return options;
}

// Cluster mode's materializer, as metrics.
std::string ClusterMetricsText(const cluster::ClusterNode& node) {
  const cluster::MaterializerStats stats = node.MaterializerStatistics();
  metrics::ClusterMetrics out{stats.applied_messages, stats.skipped_messages,
                              stats.dictionary_messages, {}};
  out.rebuild_bytes = stats.rebuild_bytes;
  out.rebuild_paused_seconds = stats.rebuild_paused_seconds;
  const cluster::ShardDirectory& shards = *node.directory();
  const std::vector<int32_t> held = shards.Held();
  for (const cluster::PartitionProgress& p : stats.partitions) {
    int serving = -1;
    if (std::find(held.begin(), held.end(), p.partition) != held.end()) {
      serving = shards.Place(p.partition).here ? 1 : 0;
    }
    out.partitions.push_back({p.partition, p.applied_offset, p.high_watermark, serving});
  }
  out.assignment_epoch = shards.Current().epoch();
  out.assignment_mismatch = !shards.FlagsMatch();
  const cluster::RoutingCounters counters = shards.Counters();
  out.forwarded = counters.forwarded;
  out.not_served_here = counters.not_served_here;
  out.appended_without_holder = counters.appended_without_holder;
  const cluster::DropperStats dropped = node.DropStatistics();
  out.partitions_dropped = dropped.partitions_dropped;
  out.dropped_records = dropped.records_dropped;
  out.dropped_bytes = dropped.bytes_dropped;
  out.partitions_pending_drop = dropped.pending;
  metrics::TextWriter text;
  metrics::RenderClusterMetrics(out, &text);
  return text.text();
}

// Serves GET /metrics on --metrics_listen, or nothing when it is empty. `cluster`
// (null in single-node mode) must outlive the endpoint.
absl::StatusOr<std::unique_ptr<metrics::HttpEndpoint>> StartMetrics(
    const service::DictlogServer& server, const metrics::RpcMetrics& rpc,
    const cluster::ClusterNode* cluster) {
  const std::string listen = absl::GetFlag(FLAGS_metrics_listen);
  if (listen.empty()) return nullptr;
  ASSIGN_OR_RETURN(metrics::HttpEndpointOptions options, MetricsOptionsFromFlags());
  ASSIGN_OR_RETURN(std::unique_ptr<metrics::HttpEndpoint> endpoint,
                   metrics::HttpEndpoint::Start(
                       listen,
                       [&server, &rpc, cluster] {
                         std::string text =
                             service::RenderMetrics(server.engine_slot().get(), rpc);
                         if (cluster != nullptr) text += ClusterMetricsText(*cluster);
                         return text;
                       },
                       std::move(options)));
  if (!absl::GetFlag(FLAGS_metrics_port_file).empty()) {
    RETURN_IF_ERROR(
        WritePortFile(absl::GetFlag(FLAGS_metrics_port_file), endpoint->port()));
  }
  std::printf("dictlogd: metrics on port %d (--metrics_listen=%s)\n", endpoint->port(),
              listen.c_str());
  return endpoint;
}

// --isolate_scopes: checks the routing rules and gives the engine the scope keys.
absl::Status IsolateScopesFromFlags(const auth::Authorizer* authorizer,
                                    engine::EngineOptions* options) {
  if (!absl::GetFlag(FLAGS_isolate_scopes)) return absl::OkStatus();
  if (authorizer == nullptr) {
    return absl::InvalidArgumentError("--isolate_scopes needs --tokens_file");
  }
  auto scopes = std::make_shared<const auth::TokenScopes>(authorizer->entries());
  RETURN_IF_ERROR(service::CheckRoutesIsolated(*scopes, options->routes));
  options->names.scope_of = service::ScopeOfCategory(std::move(scopes));
  return absl::OkStatus();
}

// --advertise_address, or --listen when it names a host and a port.
absl::StatusOr<std::string> AdvertiseAddress() {
  if (!absl::GetFlag(FLAGS_advertise_address).empty()) {
    return absl::GetFlag(FLAGS_advertise_address);
  }
  const std::string listen = absl::GetFlag(FLAGS_listen);
  const size_t colon = listen.rfind(':');
  const std::string host = colon == std::string::npos ? "" : listen.substr(0, colon);
  const std::string port = colon == std::string::npos ? "" : listen.substr(colon + 1);
  if (host.empty() || host == "0.0.0.0" || host == "[::]" || host == "::" || host == "*" ||
      port.empty() || port == "0" || absl::StartsWith(listen, "unix")) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cluster mode needs --advertise_address (HOST:PORT peers and clients reach this "
        "node at): --listen=", listen, " does not name one"));
  }
  return listen;
}

// Cluster mode from the --kafka_* flags: the topics created or verified and the
// producer open; null in single-node mode (--kafka_bootstrap empty).
absl::StatusOr<std::unique_ptr<cluster::ClusterNode>> ClusterFromFlags(
    engine::EngineOptions* options) {
  cluster::ClusterOptions cluster;
  cluster.bootstrap = absl::GetFlag(FLAGS_kafka_bootstrap);
  if (cluster.bootstrap.empty()) return nullptr;
  cluster.node_name = absl::GetFlag(FLAGS_node_name);
  cluster.nodes = absl::GetFlag(FLAGS_cluster_nodes);
  cluster.partitions = absl::GetFlag(FLAGS_kafka_partitions);
  cluster.replication_factor = absl::GetFlag(FLAGS_kafka_replication_factor);
  const int64_t delivery_ms = absl::GetFlag(FLAGS_kafka_delivery_timeout_ms);
  const int64_t wait_ms = absl::GetFlag(FLAGS_kafka_apply_wait_ms);
  RETURN_IF_ERROR(CheckFlags({{"kafka_partitions", double(cluster.partitions)},
                              {"kafka_replication_factor", double(cluster.replication_factor)},
                              {"kafka_delivery_timeout_ms", double(delivery_ms)}}));
  RETURN_IF_ERROR(CheckFlags({{"kafka_apply_wait_ms", double(wait_ms)}}, /*allow_zero=*/true));
  if (options->max_batch_records > cluster::kMaxBatchRecords) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--max_batch_records must be at most ", cluster::kMaxBatchRecords,
        " in cluster mode (a record's seq holds its index in the batch in 16 bits)"));
  }
  cluster.delivery_timeout = absl::Milliseconds(delivery_ms);
  cluster.apply_wait = absl::Milliseconds(wait_ms);
  cluster.replicas = absl::GetFlag(FLAGS_cluster_replicas);
  const int64_t announce_ms = absl::GetFlag(FLAGS_cluster_announce_interval_ms);
  RETURN_IF_ERROR(CheckFlags({{"cluster_announce_interval_ms", double(announce_ms)}}));
  RETURN_IF_ERROR(
      CheckFlags({{"cluster_replicas", double(cluster.replicas)}}, /*allow_zero=*/true));
  cluster.announce_interval = absl::Milliseconds(announce_ms);
  const int64_t max_lag = absl::GetFlag(FLAGS_cluster_max_serving_lag_messages);
  const int64_t lag_grace_ms = absl::GetFlag(FLAGS_cluster_serving_lag_grace_ms);
  RETURN_IF_ERROR(CheckFlags({{"cluster_max_serving_lag_messages", double(max_lag)},
                              {"cluster_serving_lag_grace_ms", double(lag_grace_ms)}},
                             /*allow_zero=*/true));
  cluster.materializer.serving = {max_lag, absl::Milliseconds(lag_grace_ms)};
  cluster.materializer.apply_delay_for_test =
      absl::Milliseconds(absl::GetFlag(FLAGS_cluster_apply_delay_ms_for_test));
  cluster.materializer.rebuild_bytes_per_second =
      absl::GetFlag(FLAGS_cluster_rebuild_bytes_per_second);
  RETURN_IF_ERROR(CheckFlags({{"cluster_rebuild_bytes_per_second",
                               double(cluster.materializer.rebuild_bytes_per_second)}},
                             /*allow_zero=*/true));
  const int64_t drop_ms = absl::GetFlag(FLAGS_cluster_drop_unheld_after_ms);
  RETURN_IF_ERROR(
      CheckFlags({{"cluster_drop_unheld_after_ms", double(drop_ms)}}, /*allow_zero=*/true));
  cluster.drop_unheld_after = absl::Milliseconds(drop_ms);
  ASSIGN_OR_RETURN(cluster.advertise_address, AdvertiseAddress());
  std::printf("dictlogd: cluster mode: node %s, Kafka %s; creating or checking the topics\n",
              cluster.node_name.c_str(), cluster.bootstrap.c_str());
  std::fflush(stdout);
  ASSIGN_OR_RETURN(std::unique_ptr<cluster::ClusterNode> node,
                   cluster::ClusterNode::Connect(cluster));
  options->replicated_log = node->log();
  return node;
}

// --salvage_from: the new store in --data_dir, with the store flags' options.
absl::Status Salvage() {
  ASSIGN_OR_RETURN(engine::EngineOptions options, EngineOptionsFromFlags());
  ASSIGN_OR_RETURN(options.store.max_open_files, TableFilesAfterRaisingTheLimit());
  return service::SalvageStore(absl::GetFlag(FLAGS_salvage_from), options.store,
                               /*progress_every=*/1000000, stdout, stderr);
}

// Health is NOT_SERVING and LogStore/Admin calls get UNAVAILABLE until the store is
// open; then SERVING until a signal starts draining.
absl::Status Serve(const sigset_t& signals) {
  // Security flags first: a misconfiguration fails before the store is opened.
  ASSIGN_OR_RETURN(service::ServerTls tls, TlsFromFlags(absl::GetFlag(FLAGS_listen)));
  ASSIGN_OR_RETURN(std::unique_ptr<auth::Authorizer> authorizer, AuthorizerFromFlags());
  ASSIGN_OR_RETURN(engine::EngineOptions options, EngineOptionsFromFlags());
  RETURN_IF_ERROR(IsolateScopesFromFlags(authorizer.get(), &options));
  ASSIGN_OR_RETURN(options.store.max_open_files, TableFilesAfterRaisingTheLimit());
  // Outlives the engine, whose appends it carries.
  ASSIGN_OR_RETURN(std::unique_ptr<cluster::ClusterNode> cluster_node,
                   ClusterFromFlags(&options));
  std::unique_ptr<engine::LogEngine> engine;  // Outlives the server and the endpoint.
  // Stops materializing into the engine before the engine goes.
  absl::Cleanup stop_materializer = [&cluster_node] {
    if (cluster_node != nullptr) cluster_node->StopMaterializer();
  };
  metrics::RpcMetrics rpc_metrics;
  service::ServerOptions server_options;
  server_options.listen = absl::GetFlag(FLAGS_listen);
  server_options.max_request_bytes = absl::GetFlag(FLAGS_max_request_bytes);
  server_options.max_concurrent_streams = absl::GetFlag(FLAGS_max_concurrent_streams);
  server_options.max_memory_bytes = absl::GetFlag(FLAGS_grpc_memory_bytes);
  server_options.max_threads = absl::GetFlag(FLAGS_grpc_max_threads);
  server_options.idle_threads = absl::GetFlag(FLAGS_grpc_idle_threads);
  RETURN_IF_ERROR(
      CheckFlags({{"max_request_bytes", double(server_options.max_request_bytes)},
                  {"max_concurrent_streams", double(server_options.max_concurrent_streams)},
                  {"grpc_memory_bytes", double(server_options.max_memory_bytes)},
                  {"grpc_max_threads", double(server_options.max_threads)},
                  {"grpc_idle_threads", double(server_options.idle_threads)}}));
  server_options.tls = std::move(tls);
  server_options.authorizer = authorizer.get();
  if (cluster_node != nullptr) server_options.shards = cluster_node->directory();
  const int64_t forward_ms = absl::GetFlag(FLAGS_cluster_forward_attempt_ms);
  RETURN_IF_ERROR(CheckFlags({{"cluster_forward_attempt_ms", double(forward_ms)}}));
  server_options.forward_attempt_timeout = absl::Milliseconds(forward_ms);
  // Calls are timed and counted only when someone can scrape them.
  if (!absl::GetFlag(FLAGS_metrics_listen).empty()) {
    server_options.rpc_metrics = &rpc_metrics;
  }
  ASSIGN_OR_RETURN(std::unique_ptr<service::DictlogServer> server,
                   service::DictlogServer::Start(nullptr, server_options));
  ASSIGN_OR_RETURN(std::unique_ptr<metrics::HttpEndpoint> metrics_endpoint,
                   StartMetrics(*server, rpc_metrics, cluster_node.get()));
  std::printf("dictlogd: listening on port %d, opening the store in %s\n", server->port(),
              absl::GetFlag(FLAGS_data_dir).c_str());
  std::fflush(stdout);
  absl::SleepFor(absl::Milliseconds(absl::GetFlag(FLAGS_open_delay_ms_for_test)));
  // Polled: the test creates the file when it has seen what it needed.
  for (const std::string gate = absl::GetFlag(FLAGS_open_gate_file_for_test);
       !gate.empty() && !std::filesystem::exists(gate);) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  ASSIGN_OR_RETURN(engine, engine::LogEngine::Open(std::move(options)));
  // The materializer tells the server's health; it stops before the server goes.
  absl::Cleanup stop_before_server = [&cluster_node] {
    if (cluster_node != nullptr) cluster_node->StopMaterializer();
  };
  if (cluster_node != nullptr) {
    cluster_node->SetReadinessListener(
        [server = server.get()](bool ready) { server->SetReplicasServing(ready); });
    RETURN_IF_ERROR(cluster_node->StartMaterializer(engine.get()));
  }
  server->SetEngine(engine.get());
  // The line first, then the port file: whoever waits for the port file finds the
  // line already in the log.
  std::printf("dictlogd: serving on port %d (--listen=%s, --data_dir=%s, %s, %s)\n",
              server->port(), server_options.listen.c_str(),
              absl::GetFlag(FLAGS_data_dir).c_str(),
              !server_options.tls.enabled()             ? "plaintext"
              : server_options.tls.client_ca_pem.empty() ? "TLS"
                                                         : "mutual TLS",
              authorizer == nullptr ? "no authentication" : "bearer tokens");
  std::fflush(stdout);
  if (!absl::GetFlag(FLAGS_port_file).empty()) {
    RETURN_IF_ERROR(WritePortFile(absl::GetFlag(FLAGS_port_file), server->port()));
  }
  std::thread waiter([&] {
    int signal = 0;
    sigwait(&signals, &signal);
    std::printf("dictlogd: signal %d, reporting NOT_SERVING\n", signal);
    std::fflush(stdout);
    server->ReportNotServing();
    absl::SleepFor(absl::Seconds(absl::GetFlag(FLAGS_shutdown_notice_seconds)));
    std::printf("dictlogd: refusing new calls, draining calls in flight\n");
    std::fflush(stdout);
    server->Shutdown(absl::Seconds(absl::GetFlag(FLAGS_shutdown_grace_seconds)));
  });
  server->Wait();
  waiter.join();
  return absl::OkStatus();
}

}  // namespace
}  // namespace dictlog

int main(int argc, char** argv) {
  dictlog::ParseCommandLine(
      argc, argv,
      {"server/daemon/main.cc",
       "the dictlog server: stores small log records, compressed with per-pool zstd "
       "dictionaries, and serves them over gRPC.\n\nUsage: dictlogd [--listen=HOST:PORT] "
       "[--data_dir=DIR] [--config=FILE] [--route=PREFIX*=POOL,...] [--sync_writes]\n"
       "Path flags may start with ~/ (the home directory). --version prints the "
       "versions of dictlog, zstd, gRPC and RocksDB.",
       dictlog::service::ServerLibraries()});
  dictlog::ExpandHomeInFlags({&FLAGS_data_dir, &FLAGS_config, &FLAGS_salvage_from, &FLAGS_port_file,
                              &FLAGS_tls_cert, &FLAGS_tls_key, &FLAGS_tls_client_ca, &FLAGS_peer_tls_ca,
                              &FLAGS_tokens_file, &FLAGS_metrics_port_file,
                              &FLAGS_metrics_token_file, &FLAGS_backup_root});
  std::printf("dictlogd: %s\n",
              dictlog::VersionLine("dictlogd", dictlog::service::ServerLibraries()).c_str());
  absl::SetMutexDeadlockDetectionMode(absl::GetFlag(FLAGS_mutex_deadlock_detection)
                                          ? absl::OnDeadlockCycle::kAbort
                                          : absl::OnDeadlockCycle::kIgnore);
  // Block the shutdown signals in every thread; one thread waits for them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  absl::Status status = absl::GetFlag(FLAGS_salvage_from).empty()
                            ? dictlog::Serve(signals)
                            : dictlog::Salvage();
  if (!status.ok()) {
    std::fprintf(stderr, "dictlogd: %s\n", status.ToString().c_str());
    return 1;
  }
  return 0;
}
