// Salvage: `dictlogd --salvage_from=DIR --data_dir=NEW` builds a new store from what a
// damaged one can read (docs/operations.md, "Salvaging a damaged store"), for a store
// whose damage stops its writes or its open. Reads the old store only (opened
// read-only), copies every readable entry of every column family into NEW
// (store::Store::SalvageInto), then leases every pool of NEW 2^32 seqs past its next
// one and raises its seq floor (pool::PoolRegistry::Load's skip, as after a damaged
// write-ahead log, ADR 0044): no id the old store gave, lost or not, is given again.
// Prints progress and a report of what was lost. Startup only: not thread-safe.
#ifndef DICTLOG_SERVER_DAEMON_SALVAGE_H_
#define DICTLOG_SERVER_DAEMON_SALVAGE_H_

#include <cstdio>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "server/store/store.h"

namespace dictlog::service {

// `to`: the new store's options (its path must not exist, or be an empty directory;
// else FAILED_PRECONDITION). Progress goes to `progress` every `progress_every`
// entries, the report to `out`. NOT_FOUND if `from` holds no store.
absl::Status SalvageStore(const std::string& from, const store::Store::Options& to,
                          uint64_t progress_every, std::FILE* out, std::FILE* progress);

// The seqs of each pool the lost key ranges of the records and blocks families may
// have held: from the seq after the range's lower key (a block's: its last seq) to
// the one before its upper key (a block's first), through every pool between (to
// each one's next seq, `store::StoredPool`s of the new store, before its skip), each
// pool's merged where they overlap or touch, in (pool, first) order. The salvage
// stores them (Store::PutLostSeqs) so that reads of them are DATA_LOSS.
std::vector<store::Store::LostSeqs> LostSeqsOf(const store::SalvageReport& report,
                                               const std::vector<store::StoredPool>& pools);

// The report's text: per column family the entries and bytes copied, and each lost
// key range, records and blocks ranges by pool name and seq ("web/1500 < lost <
// web/1533").
std::string SalvageReportText(const store::SalvageReport& report,
                              const std::vector<store::StoredPool>& pools);

}  // namespace dictlog::service

#endif  // DICTLOG_SERVER_DAEMON_SALVAGE_H_
