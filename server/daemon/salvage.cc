#include "server/daemon/salvage.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <memory>
#include <system_error>
#include <tuple>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/status_macros.h"
#include "server/dictionary/dictionary_cache.h"
#include "server/engine/pool_accounting.h"
#include "server/pool/pool.h"
#include "server/pool/pool_registry.h"
#include "server/store/keys.h"

namespace dictlog::service {
namespace {

// A key of the records or blocks family as "pool/seq" (blocks: "pool/first-last");
// any other as hex.
std::string KeyText(const std::string& family, const std::string& key,
                    const std::map<uint32_t, std::string>& names) {
  const auto name = [&](uint32_t id) {
    auto it = names.find(id);
    return it == names.end() ? absl::StrCat("pool#", id) : it->second;
  };
  uint32_t pool = 0;
  uint64_t first = 0, last = 0;
  if (family == "records" && store::ParseRecordKey(key, &pool, &first)) {
    return absl::StrCat(name(pool), "/", first);
  }
  if (family == "blocks" && store::ParseIndexedBlockKey(key, &pool, &first, &last)) {
    return absl::StrCat(name(pool), "/", first, "-", last);
  }
  return absl::StrCat("0x", absl::BytesToHexString(key));
}

// Where a records or blocks key puts a lost range's end: (pool, seq) with `seq` the
// key's record seq, or a block's last seq (`lower`) or first seq (upper). False for a
// key of neither form.
bool SeqOfKey(const std::string& family, const std::string& key, bool lower, uint32_t* pool,
              uint64_t* seq) {
  uint64_t first = 0, last = 0;
  if (family == "blocks" && store::ParseIndexedBlockKey(key, pool, &first, &last)) {
    *seq = lower ? last : first;
    return true;
  }
  return store::ParseRecordKey(key, pool, seq);  // Records, and blocks of entry values.
}

// A pool whose active dictionary was lost goes on without one, as on the damaged
// store (DictionaryManager: its records naming it read as DATA_LOSS; the automatic
// trainer gives it a new one). The catalog's id lease was copied whole (a salvage that
// lost catalog entries is refused), so no id is given again.
absl::Status ForgetLostActiveDictionaries(store::Store& store,
                                          const std::vector<store::StoredPool>& pools,
                                          std::FILE* out) {
  ASSIGN_OR_RETURN(const std::vector<storage::DictionaryRecord> stored,
                   store.LoadDictionaries());
  std::set<uint32_t> ids;
  for (const storage::DictionaryRecord& dictionary : stored) ids.insert(dictionary.id());
  for (const store::StoredPool& pool : pools) {
    const uint32_t active = pool.record.active_dictionary_id();
    if (active == 0 || ids.count(active) != 0) continue;
    storage::PoolRecord record = pool.record;
    record.set_active_dictionary_id(0);
    RETURN_IF_ERROR(store.PutPool(record));
    std::fprintf(out, "pool '%s' lost its active dictionary %u: it goes on without one\n",
                 record.name().c_str(), active);
  }
  return absl::OkStatus();
}

// Whether a lost range may have taken records (records, blocks) or counters: then the
// copied counters may count records that are gone, or lack some.
bool CountersMayBeWrong(const store::SalvageReport& report) {
  for (const store::SalvagedFamily& family : report.families) {
    if (family.lost.empty()) continue;
    if (family.name == "records" || family.name == "blocks" || family.name == "counters") {
      return true;
    }
  }
  return false;
}

std::string CountersText(const store::PoolCounters& c) {
  return absl::StrFormat("%d records, %d raw bytes, %d stored bytes", c.records, c.raw_bytes,
                         c.stored_bytes);
}

// Every pool's counters recounted from what the salvaged store holds, in every storage
// form (engine::CountPool, the accounting appends and retention keep), and written in
// place of the copied ones where they differ. A pool with a value that does not parse
// or a block that does not decode (its dictionary lost with the damage, or a value
// copied corrupt) keeps the copied counters, and the report says so; single values
// count by their frame headers, so those naming a lost dictionary stay counted (they
// are stored, and read DATA_LOSS). Dictionaries' reference counts stay as copied:
// high if records naming them were lost, which only keeps a dictionary from gc.
absl::Status RecountPools(store::Store& store, const pool::PoolRegistry& registry,
                          std::FILE* out) {
  dictionary::DictionaryCache lookup(
      [&store](uint32_t id) { return store.DictionaryContent(id); },
      dictionary::DictionaryCacheOptions());
  for (const std::shared_ptr<pool::Pool>& pool : registry.List()) {
    const store::PoolCounters copied = pool->counters();
    absl::StatusOr<engine::Counted> counted = engine::CountPool(store, lookup, *pool);
    if (!counted.ok()) {
      std::fprintf(out, "pool '%s': counters kept as copied (%s; they may count lost "
                   "records): recount failed: %s\n", pool->name().c_str(),
                   CountersText(copied).c_str(), counted.status().ToString().c_str());
      continue;
    }
    if (counted->pool == copied) continue;
    RETURN_IF_ERROR(store.PutPoolCounters(pool->id(), counted->pool));
    std::fprintf(out, "pool '%s': counters recounted: %s, were %s\n", pool->name().c_str(),
                 CountersText(counted->pool).c_str(), CountersText(copied).c_str());
  }
  return absl::OkStatus();
}

// Each pool's ranges merged where they overlap or touch, in (pool, first) order: the
// catalog keys a range by its pool and first seq, so two ranges from one first seq
// (a pool lost whole from the records family, and its first blocks) must be one, or
// the second written would replace the first.
std::vector<store::Store::LostSeqs> Coalesced(std::vector<store::Store::LostSeqs> lost) {
  std::sort(lost.begin(), lost.end(), [](const auto& a, const auto& b) {
    return std::tie(a.pool_id, a.first, a.last) < std::tie(b.pool_id, b.first, b.last);
  });
  std::vector<store::Store::LostSeqs> merged;
  for (const store::Store::LostSeqs& range : lost) {
    if (!merged.empty() && merged.back().pool_id == range.pool_id &&
        range.first <= merged.back().last + 1) {
      merged.back().last = std::max(merged.back().last, range.last);
      continue;
    }
    merged.push_back(range);
  }
  return merged;
}

absl::Status CheckNewDir(const std::string& path) {
  std::error_code error;
  if (!std::filesystem::exists(path, error)) return absl::OkStatus();
  if (std::filesystem::is_directory(path, error) && std::filesystem::is_empty(path, error)) {
    return absl::OkStatus();
  }
  return absl::FailedPreconditionError(absl::StrCat(
      "--data_dir ", path, " must be a new or empty directory for a salvage (the salvaged "
      "store is built there; the damaged one is only read)"));
}

}  // namespace

std::vector<store::Store::LostSeqs> LostSeqsOf(const store::SalvageReport& report,
                                               const std::vector<store::StoredPool>& pools) {
  std::vector<const store::StoredPool*> by_id;
  for (const store::StoredPool& pool : pools) by_id.push_back(&pool);
  std::sort(by_id.begin(), by_id.end(), [](const auto* a, const auto* b) {
    return a->record.id() < b->record.id();
  });
  std::vector<store::Store::LostSeqs> lost;
  for (const store::SalvagedFamily& family : report.families) {
    if (family.name != "records" && family.name != "blocks") continue;
    for (const store::SalvagedFamily::LostRange& range : family.lost) {
      uint32_t low_pool = 0, high_pool = UINT32_MAX;
      uint64_t low_seq = 0, high_seq = UINT64_MAX;
      if (!range.after.empty() &&
          !SeqOfKey(family.name, range.after, true, &low_pool, &low_seq)) {
        continue;  // Not a key of this family's form: nothing to mark.
      }
      if (!range.before.empty() &&
          !SeqOfKey(family.name, range.before, false, &high_pool, &high_seq)) {
        continue;
      }
      for (const store::StoredPool* pool : by_id) {
        const uint32_t id = pool->record.id();
        if (id < low_pool || id > high_pool) continue;
        const uint64_t first =
            id == low_pool && !range.after.empty()
                ? low_seq + 1
                : std::max<uint64_t>(pool->record.first_seq(), 1);
        const uint64_t last = id == high_pool && !range.before.empty()
                                  ? high_seq - 1
                                  : pool::Pool::NextSeq(*pool) - 1;
        if (first <= last && last != UINT64_MAX) lost.push_back({id, first, last});
      }
    }
  }
  return Coalesced(std::move(lost));
}

std::string SalvageReportText(const store::SalvageReport& report,
                              const std::vector<store::StoredPool>& pools) {
  std::map<uint32_t, std::string> names;
  for (const store::StoredPool& pool : pools) names[pool.record.id()] = pool.record.name();
  std::string text;
  size_t lost = 0;
  for (const store::SalvagedFamily& family : report.families) {
    absl::StrAppendFormat(&text, "%-13s %10d entries %12d bytes copied, %d key range(s) lost\n",
                          family.name, family.entries, family.bytes, family.lost.size());
    for (const store::SalvagedFamily::LostRange& range : family.lost) {
      absl::StrAppend(
          &text, "  lost: ",
          range.after.empty() ? "(start)" : KeyText(family.name, range.after, names), " < keys < ",
          range.before.empty() ? "(end)" : KeyText(family.name, range.before, names), "\n    ",
          range.why, "\n");
    }
    lost += family.lost.size();
  }
  absl::StrAppend(&text, lost == 0 ? "nothing lost" : absl::StrCat(lost, " key range(s) lost"),
                  " (", report.probe_seeks, " seeks to find where damage ends)\n");
  return text;
}

absl::Status SalvageStore(const std::string& from, const store::Store::Options& to,
                          uint64_t progress_every, std::FILE* out, std::FILE* progress) {
  RETURN_IF_ERROR(CheckNewDir(to.path));
  store::Store::Options source = to;
  source.path = from;
  source.read_only = true;
  ASSIGN_OR_RETURN(std::unique_ptr<store::Store> damaged, store::Store::Open(source));
  ASSIGN_OR_RETURN(std::unique_ptr<store::Store> salvaged, store::Store::Open(to));
  std::fprintf(progress, "dictlogd: salvaging %s into %s\n", from.c_str(), to.path.c_str());
  ASSIGN_OR_RETURN(
      const store::SalvageReport report,
      damaged->SalvageInto(*salvaged, progress_every, [&](const store::SalvageReport& so_far) {
        const store::SalvagedFamily& family = so_far.families.back();
        std::fprintf(progress, "dictlogd: salvage: %s: %llu entries, %llu key range(s) lost\n",
                     family.name.c_str(), static_cast<unsigned long long>(family.entries),
                     static_cast<unsigned long long>(family.lost.size()));
        std::fflush(progress);
      }));
  damaged.reset();
  for (const store::SalvagedFamily& family : report.families) {
    if (family.name != "catalog" || family.lost.empty()) continue;
    // Pools, categories and leases the store cannot know: a store built without them
    // would answer NOT_FOUND for a lost pool's records, or give a lost lease's ids again.
    salvaged.reset();
    std::error_code ignored;
    std::filesystem::remove_all(to.path, ignored);
    std::fprintf(out, "%s", SalvageReportText(report, {}).c_str());
    return absl::DataLossError(absl::StrCat(
        "the catalog (pools, categories, seq and dictionary id leases) lost ",
        family.lost.size(), " key range(s): a store without them could answer NOT_FOUND "
        "for records that exist, or give ids again; nothing was kept in ", to.path,
        ". Restore a backup (docs/operations.md, \"Backups\")"));
  }
  ASSIGN_OR_RETURN(const std::vector<store::StoredPool> copied, salvaged->LoadPools());
  RETURN_IF_ERROR(salvaged->PutLostSeqs(LostSeqsOf(report, copied)));
  RETURN_IF_ERROR(ForgetLostActiveDictionaries(*salvaged, copied, out));
  // Every pool past every id the damaged store may have given (ADR 0044's skip).
  ASSIGN_OR_RETURN(std::unique_ptr<pool::PoolRegistry> registry,
                   pool::PoolRegistry::Load(salvaged.get(), v1::PoolOptions(),
                                            pool::Pool::kRestoreLease));
  if (CountersMayBeWrong(report)) {
    std::fprintf(progress, "dictlogd: salvage: recounting every pool's records\n");
    std::fflush(progress);
    RETURN_IF_ERROR(RecountPools(*salvaged, *registry, out));
  }
  std::fprintf(out, "%s", SalvageReportText(report, copied).c_str());
  std::fprintf(out, "dictlogd: salvaged into %s: %zu pools; start dictlogd with "
               "--data_dir=%s\n", to.path.c_str(), copied.size(), to.path.c_str());
  return absl::OkStatus();
}

}  // namespace dictlog::service
