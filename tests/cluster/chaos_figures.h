// The figures of the chaos test (tests/cluster:chaos_test, docs/cluster.md "Failover"):
// when a shard map has settled after an event, which client-visible errors fall in the
// window around which event, and the table, CSV and JSON the test prints and writes.
//
// Plain values and pure functions: no shared state, safe from any thread.
#ifndef DICTLOG_TESTS_CLUSTER_CHAOS_FIGURES_H_
#define DICTLOG_TESTS_CLUSTER_CHAOS_FIGURES_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "proto/dictlog.pb.h"

namespace dictlog::chaos {

// The map has settled for the nodes that run (`running`): a node is live exactly when it
// runs, and every partition is served by each of its assigned replicas on a running
// node (2 with --cluster_replicas=2 while both run; the assignment is by ordinal, so a
// partition of a stopped node keeps one), on different nodes, and by at least one;
// `min_epoch` (0: any) the epoch the map must have reached.
bool Settled(const v1::ShardMap& map, const std::set<std::string>& running,
             uint64_t min_epoch = 0);

// One line for the log of how a map changes after an event: its epoch, the live nodes,
// and each partition's replicas, a serving one marked `*`, e.g.
// "epoch 2; live a b; p0 a* b; p1 b*".
std::string Describe(const v1::ShardMap& map);

// One failed call, as dictlog-bench --errors_out writes it (`unix_ms,op,code,id`).
struct FailedCall {
  absl::Time when;
  std::string op, code, id;
};
// The lines of an --errors_out file; INVALID_ARGUMENT naming a malformed line (a
// trailing line without its newline, cut by a kill, is skipped).
absl::StatusOr<std::vector<FailedCall>> ParseFailedCalls(absl::string_view text);

// One event of the schedule and what followed it.
struct Event {
  std::string name;     // e.g. "SIGKILL dictlogd-2"
  absl::Time at;        // when it was done
  absl::Time settled;   // when the map had settled after it (InfinitePast: never)
  // The first map after it that was not settled for the nodes then running
  // (InfinitePast: none was; e.g. a node added builds before the map names it).
  absl::Time unsettled_from = absl::InfinitePast();
  double settle_seconds() const;    // at -> settled; -1 if never
  double unsettled_seconds() const;  // unsettled_from -> settled; 0 if none; -1 if never
};

// Errors by code in each event's window [at - before, settled + after] (an error in
// two windows counts in the first), and those in none ("steady").
struct ErrorWindows {
  std::vector<std::map<std::string, int64_t>> by_event;  // parallel to the events
  std::map<std::string, int64_t> steady;
  int64_t not_found = 0;  // NOT_FOUND anywhere (reads of acknowledged ids)
};
ErrorWindows Attribute(const std::vector<Event>& events, const std::vector<FailedCall>& calls,
                       absl::Duration before, absl::Duration after);

// Totals of the final check.
struct Readback {
  int64_t acknowledged = 0, checked = 0, lost = 0, altered = 0;
};

// A fixed-width table (one line per event and one "steady"), CSV (header
// `event,at_s,settle_s,unsettled_s,code,count`, at_s from `start`) and one JSON object.
std::string FormatTable(const std::vector<Event>& events, const ErrorWindows& windows,
                        const Readback& readback, absl::Time start);
std::string FormatCsv(const std::vector<Event>& events, const ErrorWindows& windows,
                      absl::Time start);
std::string FormatJson(const std::vector<Event>& events, const ErrorWindows& windows,
                       const Readback& readback, absl::Time start, uint64_t seed);

}  // namespace dictlog::chaos

#endif  // DICTLOG_TESTS_CLUSTER_CHAOS_FIGURES_H_
