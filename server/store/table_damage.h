// Test-only: damages a store's table files the way a bad disk would, for tests of what
// opening and reading do with them (the store closed). Call from the test thread.
#ifndef DICTLOG_SERVER_STORE_TABLE_DAMAGE_H_
#define DICTLOG_SERVER_STORE_TABLE_DAMAGE_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"

namespace dictlog::store {

// Flips a byte in the last data block of the oldest table of the records family in
// `dir`: the block that holds the newest keys of the table's last pool (the one
// Store::LoadPools looks up for that pool). NOT_FOUND if `dir` has no records table.
absl::Status DamageNewestRecordsBlock(const std::string& dir);

// Flips a byte `where` (0 <= where < 1) of the way into the data blocks of the oldest
// table (the smallest file number) of column family `family` in `dir`. NOT_FOUND if it
// has no such table.
absl::Status DamageTableData(const std::string& dir, const std::string& family, double where);

// Flips a byte in the last data block of the newest table of the dictionaries family
// whose last key is dictionary `id`'s. NOT_FOUND if no table ends with it.
absl::Status DamageDictionaryAtTableEnd(const std::string& dir, uint32_t id);

}  // namespace dictlog::store

#endif  // DICTLOG_SERVER_STORE_TABLE_DAMAGE_H_
