// DeleteStaleEmptyWals: a work-around for RocksDB before 8.3 (facebook/rocksdb#11313,
// fixed upstream by #11409; Debian 12 ships 7.8.3). Each DB::Open starts a new WAL, and
// the previous one, though empty, stays until a memtable flush advances the log
// number: every open that no flush follows (a restart loop, a node that only served
// reads) leaves one more file in the data directory, without bound.
//
// Called right after DB::Open, while this process holds the directory's LOCK (no other
// one writes there): deletes the WAL files of the database directory older than the
// current one that are empty. An empty WAL holds no write, and the manifest never lists
// one: with track_and_verify_wals_in_manifest (on in Store since ADR 0046) RocksDB 7.8
// lists a log when it is synced after being closed and only if it holds bytes, so the
// next open does not miss it. Only the database directory is looked at (a
// separate wal_dir: nothing is deleted). Best effort: a file that cannot be listed or
// deleted stays, as RocksDB would have left it.
//
// Thread safety: call once, before the DB is shared.
#ifndef DICTLOG_SERVER_STORE_EMPTY_WALS_H_
#define DICTLOG_SERVER_STORE_EMPTY_WALS_H_

#include "rocksdb/db.h"

namespace dictlog::store {

// The number of files deleted.
int DeleteStaleEmptyWals(rocksdb::DB* db);

}  // namespace dictlog::store

#endif  // DICTLOG_SERVER_STORE_EMPTY_WALS_H_
