// Pool accounting: what a pool's stored records count for in its counters (records,
// raw bytes, stored bytes) and in each dictionary's, read back from the store in every
// storage form the way appends and re-compression count them: a single value its own
// size; a block entry (block found through entry values) its entry value, and the
// block's stored size with the block's first record; an indexed block's records nothing
// each, the block's size with its first record. Retention subtracts what a cut
// removes (ExpiryOf); a salvage recounts pools whose records were lost (CountPool).
//
// Thread contract: stateless functions. The caller keeps the pool's writes away while
// they read (retention holds the write gate and the pool's seal mutex; a salvage runs
// before any server opens the store): a seal between two reads would count a record
// twice or not at all.
#ifndef DICTLOG_SERVER_ENGINE_POOL_ACCOUNTING_H_
#define DICTLOG_SERVER_ENGINE_POOL_ACCOUNTING_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "codec/dictionary.h"
#include "server/pool/pool.h"
#include "server/store/pool_counters.h"
#include "server/store/store.h"

namespace dictlog::engine {

// One stored record of a pool, as its counters see it.
struct AccountedRecord {
  uint64_t seq = 0;
  std::optional<int64_t> unix_ms;  // Filled by the caller that needs it (retention).
  uint64_t stored_bytes = 0;       // Its own stored value's (0 in an indexed block).
  uint64_t raw_bytes = 0;
  uint32_t dictionary_id = 0;      // Its frame's (single values).
  std::optional<uint64_t> block;   // Block entries and indexed blocks: the first seq.
};

// A block records are packed in: its stored size and dictionary.
struct AccountedBlock {
  uint64_t stored_bytes = 0;
  uint32_t dictionary_id = 0;
};

struct AccountedRecords {
  std::vector<AccountedRecord> records;  // In seq order.
  absl::flat_hash_map<uint64_t, AccountedBlock> blocks;  // By first seq.
};

// What a set of records counts for: in the pool's counters and in each dictionary's.
struct Counted {
  store::PoolCounters pool;
  std::map<uint32_t, store::PoolCounters> dictionaries;
};

// The pool's oldest (at most `max`) records from seq `from`, from the records family
// and (block mode) its indexed blocks, in seq order, each with its sizes and
// dictionary (block entries decoded through their blocks for their raw sizes). An
// indexed block's stored size counts with its first record: if that is below `from`
// (the block holds `from`), it is not counted here.
// DATA_LOSS for a record or block that does not parse or decode.
absl::StatusOr<AccountedRecords> LoadAccountedRecords(const store::Store& store,
                                                      const codec::DictionaryLookup& lookup,
                                                      const pool::Pool& pool, uint64_t from,
                                                      size_t max);

// What the loaded records with seq < end count for (a block with its first record).
Counted CountBelow(const AccountedRecords& loaded, uint64_t end);

// What every record the pool holds counts for, read `chunk` records at a time.
absl::StatusOr<Counted> CountPool(const store::Store& store,
                                  const codec::DictionaryLookup& lookup,
                                  const pool::Pool& pool, size_t chunk = 4096);

}  // namespace dictlog::engine

#endif  // DICTLOG_SERVER_ENGINE_POOL_ACCOUNTING_H_
