// WalDrops: what write-ahead log recovery reported dropping when a store opened
// (WalDropLog counts it), and whether synced writes are missing (SyncedMark;
// Store::wal_dropped_at_open). A value type.
#ifndef DICTLOG_SERVER_STORE_WAL_DROPS_H_
#define DICTLOG_SERVER_STORE_WAL_DROPS_H_

#include <cstdint>
#include <string>

namespace dictlog::store {

struct WalDrops {
  uint64_t bytes = 0;    // Named by the reports: the stretches given up on (the replay
                         // stops at the first; what followed it is not counted).
  uint64_t reports = 0;  // Stretches reported dropped.
  std::string first;     // The first report's text (file and reason); empty if none.
  // The store's last sequence after the replay is below its synced mark (SyncedMark),
  // or the mark cannot be read: writes acknowledged as synced are gone, whether or
  // not a report names them (a log deleted, or cut between two records). Why, in
  // `synced_lost_why`.
  bool synced_writes_lost = false;
  std::string synced_lost_why;
};

}  // namespace dictlog::store

#endif  // DICTLOG_SERVER_STORE_WAL_DROPS_H_
