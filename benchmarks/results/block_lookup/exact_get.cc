// Built and run outside Bazel for RESULTS.md "Finding a record's block: seek against an
// exact key", from the workspace root (the store's key encoding is server/store/keys.cc):
//   g++ -O2 -std=c++17 -I. benchmarks/results/block_lookup/exact_get.cc \
//       server/store/keys.cc -lrocksdb -o /tmp/exact_get
//   /tmp/exact_get DB_DIR [hash]
// DB_DIR: a block2k+dict store compare kept (a copy: `hash` rewrites its blocks family).
// What finding the indexed block that holds a record costs in RocksDB alone (no zstd, no
// dictlog code), per record, thread CPU, in batches of 64 random records of 2,000,000:
//   seek     one iterator per pool and batch, a forward seek from (pool, seq - reach, 0)
//            and Next until a block ends at or after seq (reach: 1.25 x the last block's
//            span + 2), SeekForPrev when that does not settle: Store::SeekBlockHolding's
//            steps, restated here because that is private to a Store (which this
//            binary, built without Bazel, does not open);
//   get      the block's exact key (pool, first, last) from an in-memory directory of
//            every block's range (a sorted vector per pool), then DB::Get;
//   multiget the same keys, one batched DB::MultiGet per pool and batch.
// With `hash`, the blocks family is first compacted with a data-block hash index
// (kDataBlockBinaryAndHash), which only Get and MultiGet use.
// Block cache 31 MiB as compare's scale mode, Bloom filters as the store's; warm-up of
// 200,000 records before each method; 3 rounds of the three methods, alternated.
#include <rocksdb/cache.h>
#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/table.h>
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "server/store/keys.h"

namespace {

using dictlog::store::IndexedBlockKey;

struct Range {
  uint64_t first, last;
};

// The (pool, first, last) of an indexed block's key; false for a key of another form.
bool ParseKey(const rocksdb::Slice& key, uint32_t* pool, Range* range) {
  return dictlog::store::ParseIndexedBlockKey(absl::string_view(key.data(), key.size()), pool,
                                              &range->first, &range->last);
}
double Cpu() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}
void Check(const rocksdb::Status& s, const char* what) {
  if (s.ok()) return;
  std::fprintf(stderr, "exact_get: %s: %s\n", what, s.ToString().c_str());
  std::exit(1);
}

struct Target {
  uint32_t pool;
  uint64_t seq;
};

class Lookups {
 public:
  Lookups(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* blocks,
          const std::map<uint32_t, std::vector<Range>>& directory)
      : db_(db), blocks_(blocks), directory_(directory) {}

  // Every method returns the bytes of the values found (a checksum of work done).
  size_t Seek(const std::vector<Target>& batch) {
    size_t bytes = 0;
    std::unique_ptr<rocksdb::Iterator> it;
    uint32_t pool = UINT32_MAX;
    for (const Target& t : batch) {
      if (t.pool != pool) {
        it.reset(db_->NewIterator(rocksdb::ReadOptions(), blocks_));
        pool = t.pool;
      }
      bytes += SeekOne(it.get(), t);
    }
    return bytes;
  }

  size_t Get(const std::vector<Target>& batch) {
    size_t bytes = 0;
    rocksdb::PinnableSlice value;
    for (const Target& t : batch) {
      const Range* r = Holding(t);
      if (r == nullptr) continue;
      value.Reset();
      Check(db_->Get(rocksdb::ReadOptions(), blocks_, IndexedBlockKey(t.pool, r->first, r->last),
                     &value),
            "get");
      bytes += value.size();
    }
    return bytes;
  }

  size_t MultiGet(const std::vector<Target>& batch) {
    size_t bytes = 0;
    for (size_t begin = 0; begin < batch.size();) {
      size_t end = begin;
      std::vector<std::string> keys;
      while (end < batch.size() && batch[end].pool == batch[begin].pool) {
        const Range* r = Holding(batch[end]);
        if (r != nullptr) keys.push_back(IndexedBlockKey(batch[end].pool, r->first, r->last));
        ++end;
      }
      std::vector<rocksdb::Slice> slices(keys.begin(), keys.end());
      std::vector<rocksdb::PinnableSlice> values(keys.size());
      std::vector<rocksdb::Status> statuses(keys.size());
      db_->MultiGet(rocksdb::ReadOptions(), blocks_, slices.size(), slices.data(),
                    values.data(), statuses.data(), /*sorted_input=*/true);
      for (size_t i = 0; i < keys.size(); ++i) {
        Check(statuses[i], "multiget");
        bytes += values[i].size();
      }
      begin = end;
    }
    return bytes;
  }

 private:
  const Range* Holding(const Target& t) const {
    const std::vector<Range>& ranges = directory_.at(t.pool);
    auto it = std::upper_bound(ranges.begin(), ranges.end(), t.seq,
                               [](uint64_t seq, const Range& r) { return seq < r.first; });
    if (it == ranges.begin()) return nullptr;
    --it;
    return it->last >= t.seq ? &*it : nullptr;
  }

  size_t SeekOne(rocksdb::Iterator* it, const Target& t) {
    uint64_t& span = span_[t.pool];
    if (span != 0) {
      const uint64_t reach = span + span / 4 + 2;
      it->Seek(IndexedBlockKey(t.pool, t.seq > reach ? t.seq - reach : 0, 0));
      for (int step = 0; step < 8 && it->Valid(); ++step, it->Next()) {
        uint32_t pool = 0;
        Range r{};
        if (!ParseKey(it->key(), &pool, &r) || pool != t.pool || r.first > t.seq) break;
        if (r.last >= t.seq) {
          span = r.last - r.first + 1;
          return it->value().size();
        }
      }
    }
    it->SeekForPrev(IndexedBlockKey(t.pool, t.seq, UINT64_MAX));
    if (!it->Valid()) return 0;
    uint32_t pool = 0;
    Range r{};
    if (!ParseKey(it->key(), &pool, &r) || pool != t.pool || r.last < t.seq) return 0;
    span = r.last - r.first + 1;
    return it->value().size();
  }

  rocksdb::DB* db_;
  rocksdb::ColumnFamilyHandle* blocks_;
  const std::map<uint32_t, std::vector<Range>>& directory_;
  std::map<uint32_t, uint64_t> span_;
};

rocksdb::ColumnFamilyOptions BlocksOptions(const std::shared_ptr<rocksdb::Cache>& cache,
                                           bool hash) {
  rocksdb::BlockBasedTableOptions table;
  table.block_cache = cache;
  table.block_size = 4096;
  table.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
  if (hash) table.data_block_index_type = rocksdb::BlockBasedTableOptions::kDataBlockBinaryAndHash;
  rocksdb::ColumnFamilyOptions options;
  options.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  options.compression = rocksdb::kNoCompression;
  return options;
}

// Opens DB_DIR's default and blocks families (read-write only to rewrite with `hash`).
std::unique_ptr<rocksdb::DB> Open(const std::string& dir, bool hash, bool read_only,
                                  std::vector<rocksdb::ColumnFamilyHandle*>* handles) {
  std::vector<std::string> names;
  Check(rocksdb::DB::ListColumnFamilies(rocksdb::DBOptions(), dir, &names), "list families");
  std::shared_ptr<rocksdb::Cache> cache = rocksdb::NewLRUCache(31 << 20);
  std::vector<rocksdb::ColumnFamilyDescriptor> families;
  for (const std::string& name : names) {
    if (name == "blocks") {
      families.push_back({name, BlocksOptions(cache, hash)});
    } else if (!read_only || name == rocksdb::kDefaultColumnFamilyName) {
      families.push_back({name, rocksdb::ColumnFamilyOptions()});
    }
  }
  rocksdb::DB* db = nullptr;
  rocksdb::DBOptions options;
  if (read_only) {
    Check(rocksdb::DB::OpenForReadOnly(options, dir, families, handles, &db), "open");
  } else {
    Check(rocksdb::DB::Open(options, dir, families, handles, &db), "open");
  }
  return std::unique_ptr<rocksdb::DB>(db);
}

rocksdb::ColumnFamilyHandle* Blocks(const std::vector<rocksdb::ColumnFamilyHandle*>& handles) {
  for (rocksdb::ColumnFamilyHandle* h : handles) {
    if (h->GetName() == "blocks") return h;
  }
  std::fprintf(stderr, "exact_get: no blocks family\n");
  std::exit(1);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: exact_get DB_DIR [hash]\n");
    return 2;
  }
  const std::string dir = argv[1];
  const bool hash = argc > 2 && std::strcmp(argv[2], "hash") == 0;
  if (hash) {  // Rewrite the blocks family's tables with the hash index.
    std::vector<rocksdb::ColumnFamilyHandle*> handles;
    std::unique_ptr<rocksdb::DB> db = Open(dir, true, false, &handles);
    rocksdb::CompactRangeOptions compact;
    compact.bottommost_level_compaction = rocksdb::BottommostLevelCompaction::kForce;
    Check(db->CompactRange(compact, Blocks(handles), nullptr, nullptr), "compact");
    for (auto* h : handles) db->DestroyColumnFamilyHandle(h);
  }
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  std::unique_ptr<rocksdb::DB> db = Open(dir, hash, true, &handles);
  rocksdb::ColumnFamilyHandle* blocks = Blocks(handles);

  // The directory: every indexed block's range, per pool; the records they hold.
  std::map<uint32_t, std::vector<Range>> directory;
  std::vector<std::pair<uint32_t, Range>> all;
  std::vector<uint64_t> cumulative;
  uint64_t records = 0;
  {
    std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(rocksdb::ReadOptions(), blocks));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      uint32_t pool = 0;
      Range r{};
      if (!ParseKey(it->key(), &pool, &r)) continue;
      directory[pool].push_back(r);
      all.push_back({pool, r});
      records += r.last - r.first + 1;
      cumulative.push_back(records);
    }
  }
  size_t directory_bytes = 0;
  for (const auto& [pool, ranges] : directory) directory_bytes += ranges.size() * sizeof(Range);
  std::printf("%zu indexed blocks, %llu records, %zu pools, directory %zu KiB%s\n", all.size(),
              static_cast<unsigned long long>(records), directory.size(),
              directory_bytes >> 10, hash ? ", blocks family with a data-block hash index" : "");

  std::mt19937_64 rng(1);
  auto batch_of = [&](std::vector<Target>* batch) {
    batch->clear();
    for (int i = 0; i < 64; ++i) {
      const uint64_t r = std::uniform_int_distribution<uint64_t>(0, records - 1)(rng);
      const size_t b = std::upper_bound(cumulative.begin(), cumulative.end(), r) -
                       cumulative.begin();
      const uint64_t before = b == 0 ? 0 : cumulative[b - 1];
      batch->push_back({all[b].first, all[b].second.first + (r - before)});
    }
    std::sort(batch->begin(), batch->end(), [](const Target& a, const Target& b) {
      return a.pool != b.pool ? a.pool < b.pool : a.seq < b.seq;
    });
  };
  Lookups lookups(db.get(), blocks, directory);
  const char* names[] = {"seek", "get", "multiget"};
  std::vector<std::vector<double>> us(3);
  constexpr int kBatches = 200000 / 64;
  std::vector<Target> batch;
  for (int round = 0; round < 3; ++round) {
    for (int k = 0; k < 3; ++k) {
      const int method = (round + k) % 3;
      auto run = [&](int batches) {
        size_t bytes = 0;
        for (int i = 0; i < batches; ++i) {
          batch_of(&batch);
          bytes += method == 0 ? lookups.Seek(batch)
                   : method == 1 ? lookups.Get(batch) : lookups.MultiGet(batch);
        }
        return bytes;
      };
      run(kBatches);  // Warm-up.
      // The batches' making is timed apart and taken off.
      const double g0 = Cpu();
      for (int i = 0; i < kBatches; ++i) batch_of(&batch);
      const double making = Cpu() - g0;
      const double c0 = Cpu();
      const size_t bytes = run(kBatches);
      const double cpu = Cpu() - c0 - making;
      us[method].push_back(cpu * 1e6 / (kBatches * 64.0));
      std::printf("round %d %-8s %.3f us a record (%zu bytes read)\n", round + 1, names[method],
                  us[method].back(), bytes);
    }
  }
  for (int m = 0; m < 3; ++m) {
    std::sort(us[m].begin(), us[m].end());
    std::printf("median %-8s %.3f us a record\n", names[m], us[m][1]);
  }
  for (auto* h : handles) db->DestroyColumnFamilyHandle(h);
  return 0;
}
