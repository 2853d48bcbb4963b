#include "tests/cluster/chaos_figures.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace dictlog::chaos {
namespace {

// Assigned replicas of `p` on running nodes, and how many of them serve (each node once).
bool PartitionSettled(const v1::PartitionReplicas& p, const std::set<std::string>& running) {
  std::set<std::string> expected, serving;
  for (const v1::ReplicaState& replica : p.replicas()) {
    if (running.count(replica.node())) expected.insert(replica.node());
    if (replica.serving()) {
      if (!running.count(replica.node())) return false;  // a stopped node still serving
      if (!serving.insert(replica.node()).second) return false;
    }
  }
  return !serving.empty() && serving == expected;
}

std::string Seconds(absl::Duration d) { return absl::StrFormat("%.1f", absl::ToDoubleSeconds(d)); }

std::string Codes(const std::map<std::string, int64_t>& codes) {
  if (codes.empty()) return "-";
  std::vector<std::string> parts;
  for (const auto& [code, n] : codes) parts.push_back(absl::StrCat(code, ":", n));
  return absl::StrJoin(parts, " ");
}

std::string JsonCodes(const std::map<std::string, int64_t>& codes) {
  std::vector<std::string> parts;
  for (const auto& [code, n] : codes) parts.push_back(absl::StrCat("\"", code, "\":", n));
  return absl::StrCat("{", absl::StrJoin(parts, ","), "}");
}

}  // namespace

bool Settled(const v1::ShardMap& map, const std::set<std::string>& running,
             uint64_t min_epoch) {
  if (map.epoch() < min_epoch || map.partitions() == 0) return false;
  if (map.assignments_size() != static_cast<int>(map.partitions())) return false;
  for (const v1::ShardNode& node : map.nodes()) {
    if (node.live() != (running.count(node.name()) > 0)) return false;
  }
  for (const v1::PartitionReplicas& p : map.assignments()) {
    if (!PartitionSettled(p, running)) return false;
  }
  return true;
}

std::string Describe(const v1::ShardMap& map) {
  std::string text = absl::StrCat("epoch ", map.epoch(), "; live");
  for (const v1::ShardNode& node : map.nodes()) {
    if (node.live()) absl::StrAppend(&text, " ", node.name());
  }
  for (const v1::PartitionReplicas& p : map.assignments()) {
    absl::StrAppend(&text, "; p", p.partition());
    for (const v1::ReplicaState& replica : p.replicas()) {
      absl::StrAppend(&text, " ", replica.node(), replica.serving() ? "*" : "");
    }
  }
  return text;
}

absl::StatusOr<std::vector<FailedCall>> ParseFailedCalls(absl::string_view text) {
  std::vector<FailedCall> calls;
  std::vector<absl::string_view> lines = absl::StrSplit(text, '\n');
  lines.pop_back();  // "" after the last newline, or a line cut short: skipped
  for (absl::string_view line : lines) {
    std::vector<std::string> fields = absl::StrSplit(line, absl::MaxSplits(',', 3));
    int64_t ms = 0;
    if (fields.size() != 4 || !absl::SimpleAtoi(fields[0], &ms)) {
      return absl::InvalidArgumentError(absl::StrCat("malformed failed call: ", line));
    }
    calls.push_back({absl::FromUnixMillis(ms), fields[1], fields[2], fields[3]});
  }
  return calls;
}

double Event::settle_seconds() const {
  return settled == absl::InfinitePast() ? -1 : absl::ToDoubleSeconds(settled - at);
}

double Event::unsettled_seconds() const {
  if (settled == absl::InfinitePast()) return -1;
  return unsettled_from == absl::InfinitePast() ? 0
                                                : absl::ToDoubleSeconds(settled - unsettled_from);
}

ErrorWindows Attribute(const std::vector<Event>& events, const std::vector<FailedCall>& calls,
                       absl::Duration before, absl::Duration after) {
  ErrorWindows windows;
  windows.by_event.resize(events.size());
  for (const FailedCall& call : calls) {
    if (call.code == "NOT_FOUND") ++windows.not_found;
    bool counted = false;
    for (size_t i = 0; i < events.size() && !counted; ++i) {
      const absl::Time end = events[i].settled == absl::InfinitePast()
                                 ? absl::InfiniteFuture()
                                 : events[i].settled + after;
      if (call.when >= events[i].at - before && call.when <= end) {
        ++windows.by_event[i][call.code];
        counted = true;
      }
    }
    if (!counted) ++windows.steady[call.code];
  }
  return windows;
}

std::string FormatTable(const std::vector<Event>& events, const ErrorWindows& windows,
                        const Readback& readback, absl::Time start) {
  std::string out = absl::StrFormat("%-28s %8s %9s %12s  %s\n", "event", "at_s", "settle_s",
                                    "unsettled_s", "client errors by code in its window");
  for (size_t i = 0; i < events.size(); ++i) {
    out += absl::StrFormat("%-28s %8s %9.1f %12.1f  %s\n", events[i].name,
                           Seconds(events[i].at - start), events[i].settle_seconds(),
                           events[i].unsettled_seconds(), Codes(windows.by_event[i]));
  }
  out += absl::StrFormat("%-28s %8s %9s %12s  %s\n", "steady (outside windows)", "-", "-",
                         "-", Codes(windows.steady));
  out += absl::StrFormat(
      "acknowledged %d, read back %d, lost %d, altered %d; NOT_FOUND during the run %d\n",
      readback.acknowledged, readback.checked, readback.lost, readback.altered,
      windows.not_found);
  return out;
}

std::string FormatCsv(const std::vector<Event>& events, const ErrorWindows& windows,
                      absl::Time start) {
  std::string out = "event,at_s,settle_s,unsettled_s,code,count\n";
  auto rows = [&](const std::string& name, const std::string& at, const std::string& settle,
                  const std::map<std::string, int64_t>& codes) {
    if (codes.empty()) absl::StrAppend(&out, name, ",", at, ",", settle, ",OK,0\n");
    for (const auto& [code, n] : codes) {
      absl::StrAppend(&out, name, ",", at, ",", settle, ",", code, ",", n, "\n");
    }
  };
  for (size_t i = 0; i < events.size(); ++i) {
    rows(events[i].name, Seconds(events[i].at - start),
         absl::StrFormat("%.1f,%.1f", events[i].settle_seconds(), events[i].unsettled_seconds()),
         windows.by_event[i]);
  }
  rows("steady", "", ",", windows.steady);
  return out;
}

std::string FormatJson(const std::vector<Event>& events, const ErrorWindows& windows,
                       const Readback& readback, absl::Time start, uint64_t seed) {
  std::vector<std::string> items;
  for (size_t i = 0; i < events.size(); ++i) {
    items.push_back(absl::StrFormat(
        "{\"event\":\"%s\",\"at_s\":%s,\"settle_s\":%.1f,\"unsettled_s\":%.1f,"
        "\"errors\":%s}",
        events[i].name, Seconds(events[i].at - start), events[i].settle_seconds(),
        events[i].unsettled_seconds(), JsonCodes(windows.by_event[i])));
  }
  return absl::StrFormat(
      "{\"seed\":%d,\"events\":[%s],\"steady_errors\":%s,\"not_found\":%d,"
      "\"acknowledged\":%d,\"checked\":%d,\"lost\":%d,\"altered\":%d}",
      seed, absl::StrJoin(items, ","), JsonCodes(windows.steady), windows.not_found,
      readback.acknowledged, readback.checked, readback.lost, readback.altered);
}

}  // namespace dictlog::chaos
