#include "server/engine/retention.h"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "codec/record_codec.h"
#include "common/status_macros.h"
#include "common/thread_name.h"
#include "server/block/block_reader.h"

namespace dictlog::engine {
namespace {

// Records after a cut that block alignment looks at for entries of blocks keyed below
// it (as many as the tail recovery walks: concurrent appends seal out of order only
// that far).
constexpr size_t kBlockLookahead = 1024;
// Indexed blocks read per store seek while loading candidates.
constexpr size_t kIndexedBlocksPerRead = 16;
// Full passes of one pool after which its expired range is compacted even though its
// backlog is not drained yet (so space comes back during a very long backlog too).
constexpr int kCompactAfterPasses = 64;

// One of a pool's oldest records, as a pass sees it.
struct Candidate {
  uint64_t seq = 0;
  std::optional<int64_t> unix_ms;
  uint64_t stored_bytes = 0;
  uint64_t raw_bytes = 0;
  uint32_t dictionary_id = 0;  // Its frame's (single values).
  std::optional<uint64_t> block;  // Block entries and indexed blocks: the first seq.
};

// A block that candidates are packed in (found through entry values, or indexed: its
// key gives its first seq): its stored size and dictionary.
struct BlockInfo {
  uint64_t stored_bytes = 0;
  uint32_t dictionary_id = 0;
};

struct Candidates {
  std::vector<Candidate> records;  // In seq order.
  absl::flat_hash_map<uint64_t, BlockInfo> blocks;
};

// Sizes and dictionaries of the blocks the candidates are packed in, and the raw size
// of each packed record (decoded through its block).
absl::Status LoadBlocks(const store::Store& store, const codec::DictionaryLookup& lookup,
                        uint32_t pool_id, const std::vector<store::ScannedRecord>& scanned,
                        Candidates* out) {
  std::vector<store::RecordRef> refs, block_refs;
  std::vector<absl::string_view> values;
  std::vector<size_t> positions;
  for (size_t i = 0; i < out->records.size(); ++i) {
    const Candidate& c = out->records[i];
    if (!c.block.has_value()) continue;
    refs.push_back({pool_id, c.seq});
    values.push_back(scanned[i].value);
    positions.push_back(i);
    if (out->blocks.try_emplace(*c.block).second) block_refs.push_back({pool_id, *c.block});
  }
  std::vector<absl::StatusOr<std::string>> blocks = store.MultiGetBlocks(block_refs);
  for (size_t k = 0; k < block_refs.size(); ++k) {
    RETURN_IF_ERROR(blocks[k].status());
    ASSIGN_OR_RETURN(codec::RecordView view, codec::ParseRecord(*blocks[k]));
    out->blocks[block_refs[k].seq] = {blocks[k]->size(), view.dictionary_id};
  }
  std::vector<absl::StatusOr<codec::DecodedRecord>> decoded =
      block::DecodeStored(store, lookup, refs, values);
  for (size_t k = 0; k < positions.size(); ++k) {
    RETURN_IF_ERROR(decoded[k].status());
    out->records[positions[k]].raw_bytes = decoded[k]->payload.size();
  }
  return absl::OkStatus();
}

// The records family's part of the candidates: the pool's oldest (at most `max`)
// records there from seq `from` (single values, entries of blocks found through them,
// the open tail), with their sizes and dictionaries.
absl::StatusOr<Candidates> LoadRecordCandidates(const store::Store& store,
                                                const codec::DictionaryLookup& lookup,
                                                uint32_t pool_id, uint64_t from, size_t max) {
  ASSIGN_OR_RETURN(std::vector<store::ScannedRecord> scanned,
                   store.ScanRecords(pool_id, from, max));
  Candidates out;
  for (size_t i = 0; i < scanned.size(); ++i) {
    ASSIGN_OR_RETURN(codec::RecordView view, codec::ParseRecord(scanned[i].value));
    Candidate c;
    c.seq = scanned[i].seq;
    c.stored_bytes = scanned[i].value.size();
    if (view.encoding == codec::Encoding::kBlockEntry) {
      c.block = c.seq - view.block_back;
    } else {
      c.raw_bytes = view.content_size;
      c.dictionary_id = view.dictionary_id;
    }
    out.records.push_back(c);
  }
  RETURN_IF_ERROR(LoadBlocks(store, lookup, pool_id, scanned, &out));
  return out;
}

// Block mode with indexed blocks (keyed at or after `indexed_from`): the records of
// the oldest whole blocks holding seqs from `from` on, until at least `max` records,
// each decoded for its records' seqs and raw sizes. A record of an indexed block has
// no stored value of its own: the block's stored size goes with its first record.
absl::Status LoadIndexedCandidates(const store::Store& store,
                                   const codec::DictionaryLookup& lookup, uint32_t pool_id,
                                   uint64_t indexed_from, uint64_t from, size_t max,
                                   Candidates* out) {
  size_t loaded = 0;
  while (loaded < max) {
    ASSIGN_OR_RETURN(std::vector<store::IndexedBlock> blocks,
                     store.ScanIndexedBlocks(pool_id, indexed_from, from,
                                             kIndexedBlocksPerRead));
    for (const store::IndexedBlock& block : blocks) {
      ASSIGN_OR_RETURN(codec::RecordView view, codec::ParseRecord(block.value));
      ASSIGN_OR_RETURN(block::IndexedContent content,
                       block::DecodeIndexedBlock(lookup, block));
      out->blocks[block.first_seq] = {block.value.size(), view.dictionary_id};
      for (const codec::IndexedEntry& entry : content.entries) {
        Candidate c;
        c.seq = entry.seq;
        c.raw_bytes = entry.payload.size();
        c.block = block.first_seq;
        out->records.push_back(c);
      }
      loaded += content.entries.size();
      from = block.last_seq + 1;
    }
    if (blocks.size() < kIndexedBlocksPerRead) break;
  }
  return absl::OkStatus();
}

// The oldest (at most `max`) records of the pool from seq `from`, with their times,
// sizes and dictionaries: from the records family and (block mode) from the indexed
// blocks, in seq order. DATA_LOSS for a record or block that does not parse or decode.
absl::StatusOr<Candidates> LoadCandidates(const store::Store& store,
                                          const codec::DictionaryLookup& lookup,
                                          const pool::Pool& pool, uint64_t from,
                                          size_t max) {
  ASSIGN_OR_RETURN(Candidates out, LoadRecordCandidates(store, lookup, pool.id(), from, max));
  if (pool.indexed_from_seq() != 0) {
    // A seq is in the records family or in an indexed block, never both (sealing
    // deletes the values): the first `max` of both lists are the pool's oldest.
    RETURN_IF_ERROR(LoadIndexedCandidates(store, lookup, pool.id(), pool.indexed_from_seq(),
                                          from, max, &out));
    std::sort(out.records.begin(), out.records.end(),
              [](const Candidate& a, const Candidate& b) { return a.seq < b.seq; });
    if (out.records.size() > max) out.records.resize(max);
  }
  std::vector<store::RecordRef> refs;
  for (const Candidate& c : out.records) refs.push_back({pool.id(), c.seq});
  ASSIGN_OR_RETURN(std::vector<std::optional<int64_t>> times, store.AppendTimes(refs));
  for (size_t i = 0; i < out.records.size(); ++i) out.records[i].unix_ms = times[i];
  return out;
}

// How many of the candidates are older than `cutoff_ms`: up to the last one whose
// time is, stopping at the first whose time is not (records without a time, stored
// before append times, are older than any record with one).
size_t AgedOut(const std::vector<Candidate>& records, int64_t cutoff_ms) {
  size_t end = 0;
  for (size_t i = 0; i < records.size(); ++i) {
    if (!records[i].unix_ms.has_value()) continue;
    if (*records[i].unix_ms >= cutoff_ms) break;
    end = i + 1;
  }
  return end;
}

// How many of the oldest candidates must go for `excess` stored bytes to go (a block
// counts when its first record goes).
size_t SizedOut(const Candidates& c, uint64_t excess) {
  uint64_t removed = 0;
  size_t end = 0;
  for (; end < c.records.size() && removed < excess; ++end) {
    const Candidate& r = c.records[end];
    removed += r.stored_bytes;
    if (r.block.has_value() && *r.block == r.seq) {
      removed += c.blocks.at(*r.block).stored_bytes;
    }
  }
  return end;
}

// Block mode: lowers the exclusive end `end` of what expires so that blocks go whole
// and the open tail stays: no record at or after `end` is packed in a block (found
// through entry values, or indexed) keyed below it, and no record of the tail is below
// it. 0 if that cannot be established within a few lookaheads.
absl::StatusOr<uint64_t> BlockAlignedEnd(const store::Store& store, pool::Pool& pool,
                                         uint64_t end) {
  const std::optional<uint64_t> tail = pool.tail().OldestSeq();
  if (tail.has_value()) end = std::min(end, *tail);
  const uint64_t indexed_from = pool.indexed_from_seq();
  for (int round = 0; round < 8; ++round) {
    uint64_t lowest = end;
    if (indexed_from != 0 && end > indexed_from) {
      // An indexed block whose range holds `end` starts at or below it.
      ASSIGN_OR_RETURN(store::IndexedBlockSearch found,
                       store.FindIndexedBlocks(pool.id(), indexed_from, {end}));
      if (!found.failed.empty()) return found.failed[0];
      if (found.block_of[0] >= 0) {
        lowest = std::min(lowest, found.blocks[found.block_of[0]].first_seq);
      }
    }
    ASSIGN_OR_RETURN(std::vector<store::ScannedRecord> after,
                     store.ScanRecords(pool.id(), end, kBlockLookahead));
    for (const store::ScannedRecord& r : after) {
      ASSIGN_OR_RETURN(codec::RecordView view, codec::ParseRecord(r.value));
      if (view.encoding == codec::Encoding::kBlockEntry) {
        lowest = std::min(lowest, r.seq - view.block_back);
      }
    }
    if (lowest == end) return end;
    end = lowest;
  }
  return 0;
}

// The batch that expires the candidates below `end`: what goes from the pool's and
// each dictionary's counters.
store::Expiry ExpiryOf(const Candidates& c, uint32_t pool_id, uint64_t end) {
  store::Expiry expiry;
  expiry.pool_id = pool_id;
  expiry.end_seq = end;
  for (const Candidate& r : c.records) {
    if (r.seq >= end) break;
    expiry.pool_counters += {1, r.raw_bytes, r.stored_bytes};
    if (!r.block.has_value()) {
      if (r.dictionary_id != 0) {
        expiry.dictionary_counters[r.dictionary_id] += {1, r.raw_bytes, r.stored_bytes};
      }
      continue;
    }
    const BlockInfo& block = c.blocks.at(*r.block);
    store::PoolCounters d{1, r.raw_bytes, 0};
    if (*r.block == r.seq) {  // The block goes with its first record.
      expiry.pool_counters.stored_bytes += block.stored_bytes;
      d.stored_bytes = block.stored_bytes;
    }
    if (block.dictionary_id != 0) expiry.dictionary_counters[block.dictionary_id] += d;
  }
  return expiry;
}

}  // namespace

Retention::Retention(store::Store* store, pool::PoolRegistry* registry,
                     const codec::DictionaryLookup* dictionaries, absl::Mutex* write_gate,
                     RetentionOptions options)
    : store_(store),
      registry_(registry),
      dictionaries_(dictionaries),
      write_gate_(write_gate),
      options_(std::move(options)) {
  if (options_.interval > absl::ZeroDuration()) thread_ = std::thread([this] { Loop(); });
}

Retention::~Retention() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  wake_.SignalAll();
  if (thread_.joinable()) thread_.join();
}

void Retention::Loop() {
  NameThisThread("dl-retention");
  absl::MutexLock lock(&mu_);
  bool behind = false;  // The last pass expired records: more may be due at once.
  while (!stopping_) {
    if (!behind) wake_.WaitWithTimeout(&mu_, options_.interval);
    if (stopping_) break;
    mu_.Unlock();
    absl::StatusOr<uint64_t> expired = RunPass();
    if (!expired.ok()) {
      std::fprintf(stderr, "dictlogd: retention pass failed: %s\n",
                   expired.status().ToString().c_str());
    }
    behind = expired.ok() && *expired > 0;
    mu_.Lock();
  }
}

RetentionStats Retention::Stats() const {
  absl::MutexLock lock(&mu_);
  return stats_;
}

absl::StatusOr<uint64_t> Retention::RunPass() {
  absl::MutexLock pass(&pass_mu_);
  const absl::Time now = options_.clock ? options_.clock() : store_->Now();
  absl::Status first_error;
  uint64_t expired = 0;
  std::map<uint32_t, Uncompacted> listed;  // Forget pools gone since (deleted).
  for (const std::shared_ptr<pool::Pool>& pool : registry_->List()) {
    if (auto it = uncompacted_.find(pool->id()); it != uncompacted_.end()) {
      listed.insert(*it);
    }
  }
  uncompacted_ = std::move(listed);
  for (const std::shared_ptr<pool::Pool>& pool : registry_->List()) {
    const v1::PoolOptions options = pool->options();
    const bool limited = options.max_age_seconds() > 0 || options.max_bytes() > 0;
    if (!limited && uncompacted_.count(pool->id()) == 0) continue;
    // A pool whose limits were lifted still gets its pending range compacted.
    absl::StatusOr<Expired> n = limited ? ExpirePool(*pool, now) : Expired();
    absl::Status status = n.status();
    if (n.ok()) {
      expired += n->records;
      status = MaybeCompact(*pool, *n);
      if (status.ok()) continue;
    }
    std::fprintf(stderr, "dictlogd: pool '%s': retention failed: %s\n",
                 pool->name().c_str(), status.ToString().c_str());
    if (first_error.ok()) first_error = status;
  }
  absl::MutexLock lock(&mu_);
  ++stats_.runs;
  if (!first_error.ok()) return first_error;
  return expired;
}

absl::Status Retention::MaybeCompact(const pool::Pool& pool, const Expired& expired) {
  auto it = uncompacted_.find(pool.id());
  if (expired.records > 0) {
    if (it == uncompacted_.end()) it = uncompacted_.emplace(pool.id(), Uncompacted()).first;
    it->second.end_seq = std::max(it->second.end_seq, expired.end_seq);
    ++it->second.passes;
  }
  if (it == uncompacted_.end()) return absl::OkStatus();
  if (expired.behind && it->second.passes < kCompactAfterPasses) return absl::OkStatus();
  const uint64_t end_seq = it->second.end_seq;
  uncompacted_.erase(it);
  if (pool.deleted()) return absl::OkStatus();  // Its delete compacts everything.
  // Outside the write gate: appends go on while the space comes back.
  RETURN_IF_ERROR(store_->CompactExpired(pool.id(), end_seq));
  absl::MutexLock lock(&mu_);
  ++stats_.compactions;
  return absl::OkStatus();
}

absl::StatusOr<Retention::Expired> Retention::ExpirePool(pool::Pool& pool, absl::Time now) {
  const v1::PoolOptions options = pool.options();
  store::Expiry expiry;
  bool behind = false;
  {
    absl::MutexLock gate(write_gate_);  // No write of any pool meanwhile.
    if (pool.deleted()) return Expired();  // Deleted since the pass listed it.
    absl::MutexLock seal(&pool.tail().seal_mutex());
    ASSIGN_OR_RETURN(Candidates c,
                     LoadCandidates(*store_, *dictionaries_, pool, pool.retained_from(),
                                    options_.max_records_per_pass));
    size_t n = 0;
    if (options.max_age_seconds() > 0) {
      n = AgedOut(c.records, absl::ToUnixMillis(now) -
                                 static_cast<int64_t>(options.max_age_seconds()) * 1000);
    }
    const store::PoolCounters counters = pool.counters();
    if (options.max_bytes() > 0 && counters.stored_bytes > options.max_bytes()) {
      n = std::max(n, SizedOut(c, counters.stored_bytes - options.max_bytes()));
    }
    if (n == 0) return Expired();
    behind = n == c.records.size() && n >= options_.max_records_per_pass;
    uint64_t end = c.records[n - 1].seq + 1;
    if (pool.block_mode()) {
      ASSIGN_OR_RETURN(end, BlockAlignedEnd(*store_, pool, end));
    }
    if (end <= pool.retained_from()) return Expired();
    expiry = ExpiryOf(c, pool.id(), end);
    RETURN_IF_ERROR(registry_->Rewrite(pool, [&](storage::PoolRecord& record) {
      const storage::PoolRecord before = record;
      record.set_retained_from_seq(end);
      expiry.record = record;
      // The mark first: a read that meets a record or block as it goes says "expired".
      pool.set_record(record);
      absl::Status written = store_->ExpireRecords(expiry);
      if (!written.ok()) pool.set_record(before);
      return written;
    }));
    store::PoolCounters minus;
    minus -= expiry.pool_counters;
    pool.AddCounters(minus);
  }
  {
    absl::MutexLock lock(&mu_);
    RetentionStats::Expired& e = stats_.expired[pool.name()];
    e.records += expiry.pool_counters.records;
    e.stored_bytes += expiry.pool_counters.stored_bytes;
  }
  return Expired{expiry.pool_counters.records, expiry.end_seq, behind};
}

}  // namespace dictlog::engine
