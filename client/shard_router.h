// ShardRouter: where a Client sends reads in cluster mode (docs/api.md "Routing",
// docs/cluster.md "Client routing"). It keeps the seed node's shard map (LogStore.
// GetShardMap, fetched lazily on the first read, again when older than the TTL or after
// a replica refused or failed a read), one LogStore stub per node address (created on
// first use, then reused), and picks a serving replica of a partition round robin per
// call, passing over a replica that failed UNAVAILABLE or did not answer within the
// attempt timeout for a while (a killed or SIGSTOPped node the map still shows live).
// A map with partitions 0, a server that predates GetShardMap (UNIMPLEMENTED) or a
// map that cannot be fetched sends everything to the seed, as without routing. A
// malformed map is refused: reads fail DATA_LOSS naming the fault (never
// used, never a crash) until a fetch brings a good one.
//
// Thread Safety: thread-safe; one router is shared by a Client and its copies. Map
// fetches are coalesced (one at a time; callers arriving meanwhile wait for it and use
// its result) and rate limited (at most one per refresh interval); they run outside the
// lock that guards the map and the stubs.
#ifndef DICTLOG_CLIENT_SHARD_ROUTER_H_
#define DICTLOG_CLIENT_SHARD_ROUTER_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "proto/dictlog.grpc.pb.h"

namespace dictlog::client {

// The request metadata header of a read sent to a replica of its partition.
inline constexpr char kRouteHeader[] = "dictlog-route";
inline constexpr char kRouteDirect[] = "direct";

// A validated ShardMap: per partition, the addresses reads may go to.
struct ShardTable {
  // 0: not sharded; every read goes to the seed.
  uint32_t partitions = 0;
  uint64_t epoch = 0;
  // One entry per partition: the addresses of its serving replicas on live nodes, then
  // those on nodes not live (tried only when no live one serves). Empty: none serves;
  // reads of the partition go to the seed, which forwards them.
  std::vector<std::vector<std::string>> serving;
};

// The table of `map`, or DATA_LOSS (a malformed answer, as the client treats any)
// naming the first fault: assignments not
// one per partition in order, a partition index out of range or repeated, a partition
// with no replicas, a replica naming no node of `nodes`, a node named twice.
absl::StatusOr<ShardTable> BuildShardTable(const v1::ShardMap& map);

// The pool of a record id "<pool>/<seq>" (the text before its last '/'); empty if it has
// none.
absl::string_view PoolOfId(absl::string_view id);

// The partition of `pool` in `table`; -1 if the table is not sharded or pool is empty.
int64_t PartitionOfPool(const ShardTable& table, absl::string_view pool);

// Where one read goes.
struct ReadTarget {
  std::shared_ptr<v1::LogStore::Stub> stub;
  // The replica's address; empty for the seed.
  std::string address;
  // Send kRouteHeader: direct (only to a replica).
  bool direct = false;
};

class ShardRouter {
 public:
  // Fetches the seed's map (its own deadline and token); UNIMPLEMENTED from a server
  // without GetShardMap.
  using FetchMap = std::function<absl::StatusOr<v1::ShardMap>()>;
  // A stub on a new channel to a node, with the seed connection's options.
  using MakeStub = std::function<std::shared_ptr<v1::LogStore::Stub>(const std::string&)>;
  struct Options {
    // A map older than this is fetched again before the next read.
    absl::Duration ttl = absl::Seconds(30);
    // At most one fetch per this interval (failed reads ask for more).
    absl::Duration refresh_interval = absl::Seconds(1);
    // The longest a read waits for one replica while it may still try another (then
    // it does, within the caller's deadline; routed_reads.cc). Default 1 s.
    absl::Duration attempt_timeout = absl::Seconds(1);
    // A replica that failed so is passed over this long, unless no other serves: about
    // the 3 announcement intervals until the map says it is not live. Default 3 s.
    absl::Duration avoid_unresponsive_for = absl::Seconds(3);
  };

  ShardRouter(std::shared_ptr<v1::LogStore::Stub> seed, FetchMap fetch, MakeStub make_stub,
              Options options);
  ShardRouter(const ShardRouter&) = delete;
  ShardRouter& operator=(const ShardRouter&) = delete;

  // The current table, fetching it first if there is none or it is older than the TTL.
  // A fetch that fails leaves the previous table (none: an unsharded one, i.e. the
  // seed); a malformed map fails DATA_LOSS.
  absl::StatusOr<std::shared_ptr<const ShardTable>> Table();
  // The target of a read of `partition` (-1: the seed) in the current table: the next
  // serving replica round robin (one counter per router, advanced per call), skipping
  // `avoid` and, while another remains, those NoteUnresponsive named recently; the
  // seed (without direct) if none serves or the partition is out of the table's range
  // (a newer map with fewer partitions).
  ReadTarget Pick(int64_t partition, absl::string_view avoid = {});
  // After a direct read of `partition` on `failed` was refused (NotServedHere, whose
  // replica addresses are `hint`) or failed UNAVAILABLE: refreshes the map (rate
  // limited) and picks another replica, else one of `hint` other than `failed`, else
  // the seed without direct. This is the read's last direct attempt and gets the rest of
  // its deadline, so unlike Pick it never falls back on a replica NoteUnresponsive named
  // recently (a SIGSTOPped node would hold the read until its deadline, ADR 0024): with
  // none other, the seed forwards, trying each live replica with its own attempt
  // timeout. Its error: the refreshed map is malformed.
  absl::StatusOr<ReadTarget> Retarget(int64_t partition, absl::string_view failed,
                                      absl::Span<const std::string> hint);
  ReadTarget Seed() const;
  // A direct read on `address` failed UNAVAILABLE or DEADLINE_EXCEEDED: Pick passes it
  // over for Options::avoid_unresponsive_for.
  void NoteUnresponsive(const std::string& address) ABSL_LOCKS_EXCLUDED(mu_);
  absl::Duration attempt_timeout() const { return options_.attempt_timeout; }

  // Map fetches made (tests, the CLI).
  int64_t fetches() const { return fetches_.load(); }

  // What routing did since the router was made (dictlog-bench's report; docs/api.md).
  struct Stats {
    int64_t fetches = 0;                  // Map fetches made (GetShardMap calls).
    int64_t refreshes_after_failure = 0;  // Of them: asked for by a refused or failed read.
    int64_t retargets = 0;        // Reads sent elsewhere after NotServedHere or a failure.
    int64_t epoch_changes = 0;    // Fetched maps whose epoch differed from the last one's.
    uint64_t epoch = 0;           // The epoch of the table in use.
  };
  Stats stats() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  // Fetches the map unless another thread is fetching it (then waits for that fetch)
  // or it is fresh: `after_failure` false (a read found it missing or past the TTL):
  // fetched within the TTL; true (a read was refused or failed): fetched within the
  // refresh interval.
  void Refresh(bool after_failure) ABSL_LOCKS_EXCLUDED(mu_);
  std::shared_ptr<v1::LogStore::Stub> StubFor(const std::string& address)
      ABSL_LOCKS_EXCLUDED(mu_);
  std::shared_ptr<const ShardTable> CurrentTable() ABSL_LOCKS_EXCLUDED(mu_);
  bool Unresponsive(const std::string& address) ABSL_LOCKS_EXCLUDED(mu_);
  // Pick's choice; `fallback`: a replica noted unresponsive may be chosen when no other
  // serves (else the seed).
  ReadTarget Choose(int64_t partition, absl::string_view avoid, bool fallback);

  const std::shared_ptr<v1::LogStore::Stub> seed_;
  const FetchMap fetch_;
  const MakeStub make_stub_;
  const Options options_;
  std::atomic<uint64_t> next_{0};  // Round robin over serving replicas.
  std::atomic<int64_t> fetches_{0};
  std::atomic<int64_t> refreshes_after_failure_{0};
  std::atomic<int64_t> retargets_{0};
  std::atomic<int64_t> epoch_changes_{0};

  mutable absl::Mutex mu_;
  bool fetching_ ABSL_GUARDED_BY(mu_) = false;
  bool fetched_ ABSL_GUARDED_BY(mu_) = false;
  absl::Time fetched_at_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  // The last good table (initially unsharded) and the last fetch's map error (OK if
  // the map was good or could not be fetched).
  std::shared_ptr<const ShardTable> table_ ABSL_GUARDED_BY(mu_);
  absl::Status map_error_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, std::shared_ptr<v1::LogStore::Stub>> stubs_
      ABSL_GUARDED_BY(mu_);
  // Replicas that failed, until when Pick passes them over.
  absl::flat_hash_map<std::string, absl::Time> avoid_until_ ABSL_GUARDED_BY(mu_);
};

}  // namespace dictlog::client

#endif  // DICTLOG_CLIENT_SHARD_ROUTER_H_
