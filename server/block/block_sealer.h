// BlockSealer: packs a block-mode pool's open tail into blocks. New records are written
// as single values (so an acknowledged append is durable and readable at once) and
// join the pool's tail (pool::BlockTail). Once the tail holds block_bytes of payload,
// its oldest records are read back, packed into one block content, compressed with the
// pool's active dictionary as one stored value, and written in one atomic write with
// the records' single values deleted (an indexed block, keyed by its first and last
// seq and carrying each record's seq and category; ADR 0016) or, for the records of a
// pool stored before indexed blocks (seqs before Pool::indexed_from_seq()), replaced by
// entry values ("entry i of block K"). A crash or failure before that write leaves the
// single values, which read as before.
//
// Thread safety: all methods may be called concurrently; seals of one pool are
// serialized by its tail's seal_mutex().
#ifndef DICTLOG_SERVER_BLOCK_BLOCK_SEALER_H_
#define DICTLOG_SERVER_BLOCK_BLOCK_SEALER_H_

#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "codec/dictionary.h"
#include "server/pool/pool.h"
#include "server/store/store.h"

namespace dictlog::block {

class BlockSealer {
 public:
  // Borrows both; they must outlive the sealer.
  BlockSealer(store::Store* store, const codec::DictionaryLookup* dictionaries)
      : store_(store), dictionaries_(dictionaries) {}

  // Adds written records to the pool's tail (records whose payload alone fills a block
  // stay single) and seals the blocks that are ready. A seal error leaves the records
  // single and in the tail, to be retried by the next call. With `reserved_first`, the
  // records are those of the reservation (Pool::ReserveSeqs) it starts, landed with it
  // (with a cut there if `sealed_own`: the append wrote blocks of its own; BlockTail).
  absl::Status AddAndSeal(pool::Pool& pool,
                          const std::vector<pool::BlockTail::Record>& written,
                          std::optional<uint64_t> reserved_first = std::nullopt,
                          bool sealed_own = false);

  // Rebuilds a block-mode pool's tail after a restart: walks its records from the
  // newest back, collecting single values, until kRecoveryEntryRun block entries in a
  // row (or the pool's first record, or its newest indexed block's last seq); then
  // seals what is ready. A record whose header does not parse (corrupt) is left out.
  absl::Status RecoverTail(pool::Pool& pool);

  // Block entries in a row that end the tail's recovery: seals take the oldest tail
  // records first, so single values this far back are not expected.
  static constexpr size_t kRecoveryEntryRun = 1024;

 private:
  absl::Status SealReady(pool::Pool& pool);
  absl::Status Seal(pool::Pool& pool, const std::vector<pool::BlockTail::Record>& taken);
  // The seal of the single records among `taken`, read, decoded and packed; no entries
  // if all of them were sealed already.
  absl::StatusOr<store::BlockSeal> Pack(pool::Pool& pool,
                                        const std::vector<pool::BlockTail::Record>& taken);

  store::Store* const store_;
  const codec::DictionaryLookup* const dictionaries_;
};

// The pool's block size (its option, or the default for pools stored without one).
uint64_t BlockBytes(const pool::Pool& pool);

}  // namespace dictlog::block

#endif  // DICTLOG_SERVER_BLOCK_BLOCK_SEALER_H_
