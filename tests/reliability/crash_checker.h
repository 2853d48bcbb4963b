// Checker (crash test only): after a restart, compares what dictlogd holds with the
// CrashModel, through the client library only:
//   - every acknowledged record reads back (MultiGet, in chunks) byte-identical, with
//     its category, under the id it was acknowledged with;
//   - a full Scan of every pool decodes (no DATA_LOSS) and holds only records the test
//     sent, each once; every batch in flight at the kill is found whole or not at all
//     (it is then settled in the model: acknowledged with the ids found, or dropped and
//     never allowed to reappear);
//   - each pool's counters (records, raw bytes) equal the sum over its scanned records;
//   - no re-compression job has failed; dictionaries and re-compression jobs whose
//     Admin call was answered before the kill are still there.
//
// Thread safety: one thread runs a Checker, while no writer appends.
#ifndef DICTLOG_TESTS_RELIABILITY_CRASH_CHECKER_H_
#define DICTLOG_TESTS_RELIABILITY_CRASH_CHECKER_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "client/client.h"
#include "tests/reliability/crash_model.h"

namespace dictlog::crash {

// Counts of one check (or, summed, of a run). Every field below `duplicates` is a
// violation.
struct CheckReport {
  uint64_t acked_checked = 0;  // acknowledged records read back with MultiGet
  uint64_t scanned = 0;        // records seen by the full scans
  uint64_t recovered_batches = 0;  // in flight at the kill, found whole
  uint64_t dropped_batches = 0;    // in flight at the kill, not found
  double read_back_seconds = 0;    // time of the MultiGet and Scan passes
  double scan_seconds = 0;

  uint64_t lost = 0;           // acknowledged, NOT_FOUND
  uint64_t altered = 0;        // stored bytes, category or id differ from what was sent
  uint64_t partial_batches = 0;
  uint64_t decode_errors = 0;  // a read or Scan failing otherwise (DATA_LOSS, ...)
  uint64_t unknown = 0;        // a record the test never sent, or a dropped one back
  uint64_t duplicates = 0;     // the same sent record stored twice
  uint64_t counter_mismatches = 0;
  uint64_t admin_violations = 0;  // lifecycle: failed job, lost dictionary or job
  // The first few violations, in words.
  std::vector<std::string> examples;

  uint64_t violations() const;
  void Add(const CheckReport& other);
};

// Admin calls answered before a kill, whose effects must survive it.
struct AdminAcks {
  // (pool, dictionary id) of answered TrainDictionary calls.
  std::vector<std::pair<std::string, uint32_t>> dictionaries;
  // Pools whose Recompress call was answered.
  std::vector<std::string> recompressions;
};

class Checker {
 public:
  // `client` and `model` are borrowed for the checker's life.
  Checker(const client::Client* client, CrashModel* model) : client_(client), model_(model) {}
  Checker(const Checker&) = delete;
  Checker& operator=(const Checker&) = delete;

  // Runs every check; settles the model's in-flight batches. May be called again
  // (after another restart).
  CheckReport Run(const AdminAcks& admin);

 private:
  struct PoolTally {
    uint64_t records = 0;
    uint64_t raw_bytes = 0;
  };

  // Adds `count` to `counter` and keeps `what` among the first examples.
  void Violation(uint64_t* counter, std::string what, uint64_t count = 1);
  void CheckAcked();
  void CheckChunk(const std::vector<std::string>& ids,
                  const std::vector<const SentRecord*>& expected);
  bool ScanPools(const std::vector<v1::PoolInfo>& pools);
  void CheckScanned(const v1::Record& record, PoolTally* tally);
  void CheckSentRecord(const v1::Record& record, const PayloadHeader& header);
  void SettleInFlight();
  void CheckCounters(const std::vector<v1::PoolInfo>& pools);
  void CheckAdmin(const std::vector<v1::PoolInfo>& pools, const AdminAcks& admin);

  const client::Client* const client_;
  CrashModel* const model_;
  CheckReport report_;
  std::map<std::string, PoolTally> tallies_;
  // Ids of the scanned records of in-flight batches, by index ("" not seen).
  std::map<BatchKey, std::vector<std::string>> in_flight_seen_;
  std::set<std::pair<BatchKey, uint32_t>> seen_;
};

}  // namespace dictlog::crash

#endif  // DICTLOG_TESTS_RELIABILITY_CRASH_CHECKER_H_
