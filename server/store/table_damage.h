// Test-only: damages a store's table files the way a bad disk would, for tests of what
// opening and reading do with them (the store closed). Call from the test thread.
#ifndef DICTLOG_SERVER_STORE_TABLE_DAMAGE_H_
#define DICTLOG_SERVER_STORE_TABLE_DAMAGE_H_

#include <string>

#include "absl/status/status.h"

namespace dictlog::store {

// Flips a byte in the last data block of the first table of the records family found
// in `dir`: the block that holds the newest keys of the table's last pool (the one
// Store::LoadPools looks up for that pool). NOT_FOUND if `dir` has no records table.
absl::Status DamageNewestRecordsBlock(const std::string& dir);

}  // namespace dictlog::store

#endif  // DICTLOG_SERVER_STORE_TABLE_DAMAGE_H_
