#include "server/engine/retention.h"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "codec/record_codec.h"
#include "common/status_macros.h"
#include "common/thread_name.h"
#include "server/engine/pool_accounting.h"

namespace dictlog::engine {
namespace {

// Records after a cut that block alignment looks at for entries of blocks keyed below
// it (as many as the tail recovery walks: concurrent appends seal out of order only
// that far).
constexpr size_t kBlockLookahead = 1024;
// Full passes of one pool after which its expired range is compacted even though its
// backlog is not drained yet (so space comes back during a very long backlog too).
constexpr int kCompactAfterPasses = 64;

// The oldest (at most `max`) records of the pool from seq `from`, with their times,
// sizes and dictionaries: from the records family and (block mode) from the indexed
// blocks, in seq order. DATA_LOSS for a record or block that does not parse or decode.
absl::StatusOr<AccountedRecords> LoadCandidates(const store::Store& store,
                                                const codec::DictionaryLookup& lookup,
                                                const pool::Pool& pool, uint64_t from,
                                                size_t max) {
  ASSIGN_OR_RETURN(AccountedRecords out, LoadAccountedRecords(store, lookup, pool, from, max));
  std::vector<store::RecordRef> refs;
  for (const AccountedRecord& c : out.records) refs.push_back({pool.id(), c.seq});
  ASSIGN_OR_RETURN(std::vector<std::optional<int64_t>> times, store.AppendTimes(refs));
  for (size_t i = 0; i < out.records.size(); ++i) out.records[i].unix_ms = times[i];
  return out;
}

// How many of the candidates are older than `cutoff_ms`: up to the last one whose
// time is, stopping at the first whose time is not (records without a time, stored
// before append times, are older than any record with one).
size_t AgedOut(const std::vector<AccountedRecord>& records, int64_t cutoff_ms) {
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
size_t SizedOut(const AccountedRecords& c, uint64_t excess) {
  uint64_t removed = 0;
  size_t end = 0;
  for (; end < c.records.size() && removed < excess; ++end) {
    const AccountedRecord& r = c.records[end];
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
store::Expiry ExpiryOf(const AccountedRecords& c, uint32_t pool_id, uint64_t end) {
  store::Expiry expiry;
  expiry.pool_id = pool_id;
  expiry.end_seq = end;
  Counted counted = CountBelow(c, end);
  expiry.pool_counters = counted.pool;
  expiry.dictionary_counters = std::move(counted.dictionaries);
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
    ASSIGN_OR_RETURN(AccountedRecords c,
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
