// Store's append-time index: the `times` column family (docs/storage-format.md, ADR
// 0015). One entry per pool and append call, keyed like a record by the call's first
// seq in the pool; a record's time is that of the entry at or before its key.
#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include <algorithm>
#include <map>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "codec/varint.h"
#include "common/status_macros.h"
#include "server/store/keys.h"
#include "server/store/rocksdb_status.h"
#include "server/store/store.h"

namespace dictlog::store {
namespace {

// An entry of the times family: its pool, first seq and time.
struct TimeEntry {
  uint32_t pool_id = 0;
  uint64_t first_seq = 0;
  int64_t unix_ms = 0;
};

// The entry under the iterator; DATA_LOSS if its key or value does not parse.
absl::StatusOr<TimeEntry> EntryAt(const rocksdb::Iterator& it) {
  TimeEntry entry;
  absl::string_view value(it.value().data(), it.value().size());
  uint64_t ms = 0;
  if (!ParseRecordKey(absl::string_view(it.key().data(), it.key().size()), &entry.pool_id,
                      &entry.first_seq) ||
      !codec::GetVarint64(&value, &ms) || !value.empty() || ms > INT64_MAX) {
    return absl::DataLossError("malformed entry in the times column family");
  }
  entry.unix_ms = static_cast<int64_t>(ms);
  return entry;
}

// The pool's entry at or before `seq` (SeekForPrev), if any.
absl::StatusOr<std::optional<TimeEntry>> EntryAtOrBefore(rocksdb::Iterator& it,
                                                         uint32_t pool_id, uint64_t seq) {
  it.SeekForPrev(RecordKey(pool_id, seq));
  std::optional<TimeEntry> found;
  if (it.Valid()) {
    ASSIGN_OR_RETURN(TimeEntry entry, EntryAt(it));
    if (entry.pool_id == pool_id) found = entry;
  }
  RETURN_IF_ERROR(FromRocks(it.status(), "reading append times"));
  return found;
}

}  // namespace

absl::StatusOr<std::optional<uint64_t>> Store::FirstSeqAtOrAfterTime(uint32_t pool_id,
                                                                     int64_t unix_ms) const {
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), times_));
  ASSIGN_OR_RETURN(std::optional<TimeEntry> last, EntryAtOrBefore(*it, pool_id, UINT64_MAX));
  if (!last.has_value() || last->unix_ms < unix_ms) return std::nullopt;
  // Binary search over seqs: `hi` is always an entry's seq whose time is >= unix_ms,
  // and every seq below `lo` is covered by an entry with an earlier time.
  uint64_t lo = 0;
  uint64_t hi = last->first_seq;
  while (lo < hi) {
    const uint64_t mid = lo + (hi - lo) / 2;
    ASSIGN_OR_RETURN(std::optional<TimeEntry> probe, EntryAtOrBefore(*it, pool_id, mid));
    if (probe.has_value() && probe->unix_ms >= unix_ms) {
      hi = probe->first_seq;  // <= mid < hi.
    } else {
      lo = mid + 1;
    }
  }
  return hi;
}

absl::Status Store::BatchAppendTimes(absl::Span<const RecordWrite> records,
                                     rocksdb::WriteBatch* batch,
                                     std::vector<RecordRef>* entries) {
  // Each pool's smallest seq of the call (its seqs are consecutive) and its time.
  std::map<uint32_t, std::pair<uint64_t, int64_t>> first;
  for (const RecordWrite& record : records) {
    if (record.append_unix_ms <= 0) continue;
    auto [it, added] =
        first.try_emplace(record.pool_id, record.seq, record.append_unix_ms);
    if (!added && record.seq < it->second.first) {
      it->second = {record.seq, record.append_unix_ms};
    }
  }
  for (const auto& [pool_id, entry] : first) {
    std::string value;
    codec::PutVarint64(static_cast<uint64_t>(entry.second), &value);
    RETURN_IF_ERROR(FromRocks(batch->Put(times_, RecordKey(pool_id, entry.first), value),
                              "batching an append time"));
    entries->push_back(RecordRef{pool_id, entry.first});
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::optional<int64_t>>> Store::AppendTimes(
    absl::Span<const RecordRef> refs) const {
  std::vector<std::optional<int64_t>> times(refs.size());
  // Refs in a cached range need no iterator (time_range_cache.h); the others are looked
  // up in key order (a Scan's refs already are; a MultiGet's are sorted): the iterator
  // then moves forward only, and steps to the next entry instead of seeking when near.
  std::vector<std::pair<std::pair<uint32_t, uint64_t>, size_t>> order;
  for (size_t i = 0; i < refs.size(); ++i) {
    times[i] = time_ranges_.Find(refs[i].pool_id, refs[i].seq);
    if (!times[i].has_value()) order.push_back({{refs[i].pool_id, refs[i].seq}, i});
  }
  if (order.empty()) return times;
  if (!std::is_sorted(order.begin(), order.end())) std::sort(order.begin(), order.end());
  // Versions before the snapshot: a range read from it is cached only if no entry of
  // its pool was committed since (time_range_cache.h).
  absl::flat_hash_map<uint32_t, uint64_t> versions;
  for (const auto& [key_parts, i] : order) {
    versions.try_emplace(key_parts.first, time_ranges_.Version(key_parts.first));
  }
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), times_));
  // The entry at or before the last key looked up (any pool; `have` false: none), and
  // whether the iterator stands on the entry after it (invalid: none).
  TimeEntry found;
  bool have = false;
  bool positioned = false;
  // Whether `found` is its pool's last entry: the iterator moved past it to no entry of
  // the pool (set by `fill`). Its range is then known up to each seq it answers.
  bool found_is_last = false;
  // Caches `found`'s range when the iterator stands on the pool's next entry; notes
  // that `found` is the pool's last entry when it does not.
  auto fill = [&]() -> absl::Status {
    found_is_last = true;
    if (!it->Valid()) return absl::OkStatus();
    uint32_t next_pool = 0;
    uint64_t next_seq = 0;
    if (!ParseRecordKey(absl::string_view(it->key().data(), it->key().size()), &next_pool,
                        &next_seq)) {
      return absl::DataLossError("malformed key in the times column family");
    }
    if (next_pool == found.pool_id && next_seq > found.first_seq) {
      found_is_last = false;
      time_ranges_.Fill(found.pool_id, versions[found.pool_id], found.first_seq,
                        next_seq - 1, found.unix_ms);
    }
    return absl::OkStatus();
  };
  for (const auto& [key_parts, i] : order) {
    const std::string key = RecordKey(key_parts.first, key_parts.second);
    const rocksdb::Slice target(key);
    // Entries between one key and the next are stepped over up to this many; past
    // that a seek is cheaper.
    constexpr int kMostSteps = 8;
    int steps = 0;
    while (positioned && it->Valid() && it->key().compare(target) <= 0 && steps < kMostSteps) {
      ASSIGN_OR_RETURN(found, EntryAt(*it));
      it->Next();
      ++steps;
      if (versions.contains(found.pool_id)) RETURN_IF_ERROR(fill());
    }
    if (!positioned || (it->Valid() && it->key().compare(target) <= 0)) {
      have = false;
      it->SeekForPrev(target);
      positioned = it->Valid();
      if (positioned) {
        ASSIGN_OR_RETURN(found, EntryAt(*it));
        have = true;
        it->Next();
        if (versions.contains(found.pool_id)) RETURN_IF_ERROR(fill());
      }
    }
    RETURN_IF_ERROR(FromRocks(it->status(), "reading append times"));
    if (have && found.pool_id == key_parts.first) {  // `fill` ran for this `found`.
      times[i] = found.unix_ms;
      if (found_is_last) {  // Refs are in key order: each Fill extends the last one.
        time_ranges_.Fill(found.pool_id, versions[found.pool_id], found.first_seq,
                          key_parts.second, found.unix_ms);
      }
    }
  }
  return times;
}

}  // namespace dictlog::store
