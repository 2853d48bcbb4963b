// Key encodings of the RocksDB column families (docs/storage-format.md):
//
//   records    key := pool_id:u32be seq:u64be          (sorted by pool, then seq)
//   catalog    key := 'P' pool_name                     -> PoolRecord
//                   | 'C' pool_id:u32be category        -> category_index:varint
//                   | 'R' pool_id:u32be                 -> RecompressState
//                   | 'L' partition:u32be               -> offset:u64be (cluster mode:
//                                                          the last Kafka offset applied)
//                   | 'X' pool_name                     -> DeletedPool (tombstone)
//                   | 'S' pool_id:u32be                 -> next_seq:u64be (a seq lease:
//                                                          no seq at or above it was
//                                                          handed out; synced)
//                   | 'G' pool_id:u32be first:u64be     -> last:u64be (seqs first..last
//                                                          of the pool were lost to a
//                                                          damaged table block, found by
//                                                          a salvage: reads are
//                                                          DATA_LOSS)
//                   | 'I'                               -> next_id:u32be (the dictionary
//                                                          id lease: no dictionary id at
//                                                          or above it was handed out;
//                                                          synced; single-node mode)
//   counters   key := pool_id:u32be                     -> PoolCounters (merged)
//                   | 'D' dictionary_id:u32be           -> PoolCounters of the records
//                                                          whose frames name it
//   blocks     key := pool_id:u32be first_seq:u64be     (a block found through its
//                                                          records' entry values)
//                   | pool_id:u32be first_seq:u64be last_seq:u64be  (an indexed block,
//                                                          found by seeking; ADR 0016)
//   dictionaries key := dictionary_id:u32be             -> DictionaryRecord
//   requests   key := request_id                         -> AppendedRequest
//                                                          (no principal: the bare id)
//                   | 0x01 len:u8 principal request_id  (a token's principal)
//   times      key := pool_id:u32be first_seq:u64be    -> unix_ms:varint (RecordKey)
//   default    key := "synced-mark"                     -> "" (a synced write after one
//                                                          that others raced; ADR 0044)
//
// Big-endian integers make byte order equal numeric order. Stateless, thread-safe.
#ifndef DICTLOG_SERVER_STORE_KEYS_H_
#define DICTLOG_SERVER_STORE_KEYS_H_

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace dictlog::store {

inline constexpr char kPoolPrefix = 'P';
inline constexpr char kCategoryPrefix = 'C';
inline constexpr char kRecompressPrefix = 'R';
inline constexpr char kLogPositionPrefix = 'L';
inline constexpr char kDeletedPoolPrefix = 'X';
inline constexpr char kSeqCeilingPrefix = 'S';
inline constexpr char kLostSeqsPrefix = 'G';
inline constexpr char kDictionaryIdLeaseKey = 'I';
inline constexpr char kSeqFloorKey = 'F';
inline constexpr char kDictionaryCounterPrefix = 'D';
inline constexpr char kScopedRequestPrefix = '\x01';

// The default family's one key: a one-sequence synced write that marks a synced write
// raced by others (Store::RaiseSyncedMark, ADR 0044). Its value is empty.
inline constexpr char kSyncedMarkKey[] = "synced-mark";

inline constexpr size_t kMaxPrincipalBytes = 255;
inline constexpr size_t kRecordKeyBytes = 12;
inline constexpr size_t kIndexedBlockKeyBytes = 20;

std::string RecordKey(uint32_t pool_id, uint64_t seq);
// False unless `key` is a well-formed record key.
bool ParseRecordKey(absl::string_view key, uint32_t* pool_id, uint64_t* seq);

// The blocks-family key of an indexed block: ordered by pool, then first seq.
std::string IndexedBlockKey(uint32_t pool_id, uint64_t first_seq, uint64_t last_seq);
// False unless `key` is a well-formed indexed block key.
bool ParseIndexedBlockKey(absl::string_view key, uint32_t* pool_id, uint64_t* first_seq,
                          uint64_t* last_seq);

std::string PoolKey(absl::string_view pool_name);
std::string CategoryKey(uint32_t pool_id, absl::string_view category);
std::string CategoryKeyPrefix(uint32_t pool_id);
std::string CounterKey(uint32_t pool_id);
std::string DictionaryCounterKey(uint32_t dictionary_id);
std::string RecompressKey(uint32_t pool_id);
// Cluster mode: the catalog key of a Kafka partition's applied offset.
std::string LogPositionKey(uint32_t partition);
std::string DeletedPoolKey(absl::string_view pool_name);
// The catalog key of a pool's seq lease (Store::PutSeqCeilings).
std::string SeqCeilingKey(uint32_t pool_id);
std::string LostSeqsKey(uint32_t pool_id, uint64_t first_seq);
std::string LostSeqsPrefix(uint32_t pool_id);
std::string DictionaryKey(uint32_t dictionary_id);
// The requests-family key of `request_id` (printable ASCII, so never starting with
// 0x01) as used by `principal` (at most 255 bytes). An empty principal (no tokens
// file) keeps the bare request id, the only form written before request ids were
// scoped per principal.
std::string RequestKey(absl::string_view principal, absl::string_view request_id);

void PutFixed32BE(uint32_t value, std::string* out);
void PutFixed64BE(uint64_t value, std::string* out);
uint32_t GetFixed32BE(const char* p);
uint64_t GetFixed64BE(const char* p);

}  // namespace dictlog::store

#endif  // DICTLOG_SERVER_STORE_KEYS_H_
