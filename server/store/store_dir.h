// CheckStoreDir: whether a data directory may be opened, or a store created in it.
//
// RocksDB reads a store's state from CURRENT, which names the MANIFEST. Asked to open a
// directory without CURRENT and allowed to create (create_if_missing, which a first
// start needs), it makes a new, empty store there, and its first clean-up deletes every
// table file the new MANIFEST does not name. A store that lost its CURRENT file (a
// file system, an operator, a copy that stopped early) was refused once (its WAL made
// the creation fail), but that failed creation left a new CURRENT behind, and the next
// start opened an empty store and deleted every table file: found by corruption_test's
// `delete` target (docs/reliability.md, "Corruption").
//
// OpenRefusal: the status of a refused RocksDB open, said in the store's terms where
// RocksDB's own words would leave an operator guessing (a missing file, a missing or
// short write-ahead log the MANIFEST lists).
//
// Thread safety: free functions; CheckStoreDir reads the file system, call it before
// opening.
#ifndef DICTLOG_SERVER_STORE_STORE_DIR_H_
#define DICTLOG_SERVER_STORE_STORE_DIR_H_

#include <string>

#include "absl/status/status.h"

namespace rocksdb {
class Status;
}  // namespace rocksdb

namespace dictlog::store {

// OK if `path` holds CURRENT (a store to open) or none of a store's files (NNNNNN.sst,
// NNNNNN.log, MANIFEST-NNNNNN: a store may be created there). DATA_LOSS, naming what was found, if it
// holds a store's files without CURRENT: opening must not create a store over them.
// UNAVAILABLE if the directory cannot be listed.
absl::Status CheckStoreDir(const std::string& path);

// `opened`, a failed DB::Open of the store at `path`, as an absl status (FromRocks),
// DATA_LOSS with an explanation for:
// - a file the store names that is not there (CURRENT names a missing MANIFEST);
// - a write-ahead log the MANIFEST lists as synced and still needed (ADR 0046) that is
//   missing or shorter than its synced size: writes acknowledged as synced are lost,
//   the log is named as NNNNNN.log.
absl::Status OpenRefusal(const std::string& path, const rocksdb::Status& opened);

}  // namespace dictlog::store

#endif  // DICTLOG_SERVER_STORE_STORE_DIR_H_
