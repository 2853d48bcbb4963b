// Salvage end to end: a store with a damaged records table, salvaged into a new one
// that a LogEngine opens: every record outside the damaged block reads back, the
// pools take appends past every id given before, and the damaged store is unchanged.
#include "server/daemon/salvage.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <tuple>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "codec/test_dictionary.h"
#include "common/test_dir.h"
#include "gtest/gtest.h"
#include "server/engine/log_engine.h"
#include "server/pool/pool.h"
#include "server/store/keys.h"
#include "server/store/table_damage.h"

namespace dictlog::service {
namespace {

std::string ReadAll(std::FILE* file) {
  std::rewind(file);
  std::string text;
  char buffer[4096];
  while (size_t n = std::fread(buffer, 1, sizeof(buffer), file)) text.append(buffer, n);
  return text;
}

uint64_t SeqOf(const std::string& id, const std::string& pool) {
  uint64_t seq = 0;
  EXPECT_TRUE(absl::SimpleAtoi(absl::StripPrefix(id, pool + "/"), &seq)) << id;
  return seq;
}

TEST(SalvageTest, ADamagedStoreIsSalvagedIntoOneThatReadsAndAppends) {
  const std::string damaged = FreshTestDir();
  const std::string salvaged = damaged + "-salvaged";
  engine::EngineOptions options;
  options.store.path = damaged;
  options.auto_train = false;
  std::vector<std::string> ids;
  std::vector<std::string> lines;
  {
    auto engine = engine::LogEngine::Open(options);
    ASSERT_TRUE(engine.ok()) << engine.status();
    for (const auto& [pool, count] : {std::pair<std::string, int>{"web", 3000}, {"db", 500}}) {
      const std::vector<std::string> part = codec::SyntheticLogLines(count, pool.size());
      std::vector<engine::AppendInput> batch;
      for (const std::string& line : part) batch.push_back({pool, line});
      auto appended = (*engine)->Append(batch);
      ASSERT_TRUE(appended.ok()) << appended.status();
      ids.insert(ids.end(), appended->begin(), appended->end());
      lines.insert(lines.end(), part.begin(), part.end());
    }
    ASSERT_TRUE((*engine)->Flush().ok());
  }
  ASSERT_TRUE(store::DamageTableData(damaged, "records", 0.5).ok());

  std::FILE* out = std::tmpfile();
  std::FILE* progress = std::tmpfile();
  store::Store::Options to;
  to.path = salvaged;
  ASSERT_TRUE(SalvageStore(damaged, to, 500, out, progress).ok());
  const std::string report = ReadAll(out);
  EXPECT_TRUE(absl::StrContains(report, "1 key range(s) lost\n")) << report;
  EXPECT_TRUE(absl::StrContains(report, "  lost: web/")) << report;
  EXPECT_TRUE(absl::StrContains(ReadAll(progress), "dictlogd: salvage: records: 500 entries"));
  std::fclose(out);
  std::fclose(progress);

  options.store.path = salvaged;
  auto engine = engine::LogEngine::Open(options);
  ASSERT_TRUE(engine.ok()) << engine.status();
  auto results = (*engine)->MultiGet(ids);
  ASSERT_TRUE(results.ok()) << results.status();
  size_t right = 0;
  uint64_t first_lost = 0, last_lost = 0;
  for (size_t i = 0; i < ids.size(); ++i) {
    if ((*results)[i].ok()) {
      ASSERT_EQ((*results)[i]->payload(), lines[i]) << ids[i];
      ++right;
      continue;
    }
    // Lost with the damaged block: DATA_LOSS, as on the damaged store, never NOT_FOUND.
    ASSERT_EQ((*results)[i].status().code(), absl::StatusCode::kDataLoss) << ids[i];
    EXPECT_TRUE(absl::StrContains((*results)[i].status().message(), "salvaged"));
    EXPECT_EQ((*engine)->Get(ids[i]).status().code(), absl::StatusCode::kDataLoss);
    const uint64_t seq = SeqOf(ids[i], "web");
    if (first_lost == 0) first_lost = seq;
    EXPECT_EQ(seq, std::max(last_lost + 1, first_lost)) << "lost records are one run";
    last_lost = seq;
  }
  EXPECT_GT(right, ids.size() - 200);  // One table block's records at most.
  EXPECT_LT(right, ids.size());
  // The counters count what is left: web's recounted, db's as they were.
  uint64_t web_raw = 0;
  for (size_t i = 0; i < 3000; ++i) web_raw += (*results)[i].ok() ? lines[i].size() : 0;
  const v1::PoolStats web = (*engine)->GetPool("web")->stats();
  EXPECT_EQ(web.records(), right - 500);
  EXPECT_EQ(web.raw_bytes(), web_raw);
  EXPECT_TRUE(absl::StrContains(report, absl::StrCat("pool 'web': counters recounted: ",
                                                     right - 500, " records, ", web_raw,
                                                     " raw bytes")))
      << report;
  EXPECT_FALSE(absl::StrContains(report, "pool 'db'")) << report;
  EXPECT_EQ((*engine)->GetPool("db")->stats().records(), 500u);
  // A scan answers the records before the lost run, then ends there with DATA_LOSS;
  // one from past the run reads the rest.
  engine::ScanSpec scan;
  scan.pool = "web";
  uint64_t scanned = 0;
  const absl::Status stopped = (*engine)->Scan(scan, [&](std::vector<v1::Record> chunk) {
    scanned += chunk.size();
    return absl::OkStatus();
  });
  EXPECT_EQ(stopped.code(), absl::StatusCode::kDataLoss) << stopped;
  EXPECT_EQ(scanned, first_lost - 1);
  scan.from_id = absl::StrCat("web/", last_lost + 1);
  scanned = 0;
  EXPECT_TRUE((*engine)->Scan(scan, [&](std::vector<v1::Record> chunk) {
    scanned += chunk.size();
    return absl::OkStatus();
  }).ok());
  EXPECT_EQ(scanned, 3000 - last_lost);
  // Verify lists the lost run as known, not corrupt: it holds every record read
  // DATA_LOSS above and none that read back.
  auto verified = (*engine)->Verify(v1::VerifyRequest(), [] { return false; });
  ASSERT_TRUE(verified.ok()) << verified.status();
  EXPECT_EQ(verified->corrupt_records(), 0u);
  EXPECT_EQ(verified->records_checked(), right);
  ASSERT_EQ(verified->lost_ranges(), 1u);
  ASSERT_EQ(verified->lost_size(), 1);
  EXPECT_EQ(verified->lost(0).pool(), "web");
  const uint64_t range_first = SeqOf(verified->lost(0).first_id(), "web");
  const uint64_t range_last = SeqOf(verified->lost(0).last_id(), "web");
  EXPECT_EQ(range_first, first_lost) << verified->DebugString();
  EXPECT_EQ(range_last, last_lost) << verified->DebugString();
  // Appends go on past every id the damaged store gave.
  for (const std::string pool : {"web", "db"}) {
    auto appended = (*engine)->Append({{pool, "after the salvage"}});
    ASSERT_TRUE(appended.ok()) << appended.status();
    EXPECT_GT(SeqOf((*appended)[0], pool), pool::Pool::kRestoreLease) << (*appended)[0];
    EXPECT_EQ((*engine)->Get((*appended)[0])->payload(), "after the salvage");
  }
  EXPECT_TRUE((*engine)->WritesStopped().ok());
  engine->reset();

  // The new directory must be new; the old one must hold a store.
  out = std::tmpfile();
  EXPECT_EQ(SalvageStore(damaged, to, 500, out, out).code(), absl::StatusCode::kFailedPrecondition);
  to.path = salvaged + "-2";
  EXPECT_EQ(SalvageStore(damaged + "-none", to, 500, out, out).code(), absl::StatusCode::kNotFound);
  std::fclose(out);
}

// A block-mode pool whose blocks table is damaged: the records of the lost blocks read
// DATA_LOSS in the salvaged store, every other one reads back.
TEST(SalvageTest, RecordsOfALostBlockReadAsDataLoss) {
  const std::string damaged = FreshTestDir();
  engine::EngineOptions options;
  options.store.path = damaged;
  options.auto_train = false;
  v1::PoolOptions block;
  block.set_storage_mode(v1::STORAGE_MODE_BLOCK);
  block.set_block_bytes(2048);
  options.pools = {{"blk", block}};
  const std::vector<std::string> lines = codec::SyntheticLogLines(4000, 11);
  std::vector<std::string> ids;
  {
    auto engine = engine::LogEngine::Open(options);
    ASSERT_TRUE(engine.ok()) << engine.status();
    std::vector<engine::AppendInput> batch;
    for (const std::string& line : lines) batch.push_back({"blk", line});
    auto appended = (*engine)->Append(batch);  // Sealed straight into indexed blocks.
    ASSERT_TRUE(appended.ok()) << appended.status();
    ids = *appended;
    ASSERT_TRUE((*engine)->Flush().ok());
  }
  ASSERT_TRUE(store::DamageTableData(damaged, "blocks", 0.5).ok());
  std::FILE* out = std::tmpfile();
  store::Store::Options to;
  to.path = damaged + "-salvaged";
  ASSERT_TRUE(SalvageStore(damaged, to, 1000, out, out).ok());
  const std::string report = ReadAll(out);
  std::fclose(out);
  EXPECT_TRUE(absl::StrContains(report, "  lost: blk/")) << report;
  options.store.path = to.path;
  auto engine = engine::LogEngine::Open(options);
  ASSERT_TRUE(engine.ok()) << engine.status();
  auto results = (*engine)->MultiGet(ids);
  ASSERT_TRUE(results.ok()) << results.status();
  size_t right = 0, lost = 0;
  for (size_t i = 0; i < ids.size(); ++i) {
    if ((*results)[i].ok()) {
      ASSERT_EQ((*results)[i]->payload(), lines[i]) << ids[i];
      ++right;
    } else {
      ASSERT_EQ((*results)[i].status().code(), absl::StatusCode::kDataLoss)
          << ids[i] << ": " << (*results)[i].status();
      ++lost;
    }
  }
  EXPECT_GT(lost, 0u);
  EXPECT_GT(right, ids.size() - 200);
  // The counters count what is left, the lost blocks' stored bytes no longer.
  uint64_t raw = 0;
  for (size_t i = 0; i < ids.size(); ++i) raw += (*results)[i].ok() ? lines[i].size() : 0;
  const v1::PoolStats stats = (*engine)->GetPool("blk")->stats();
  EXPECT_EQ(stats.records(), right);
  EXPECT_EQ(stats.raw_bytes(), raw);
  EXPECT_TRUE(absl::StrContains(report, absl::StrCat("pool 'blk': counters recounted: ", right,
                                                     " records")))
      << report;
  // A scan reads every record before the lost blocks, then ends with DATA_LOSS.
  engine::ScanSpec scan;
  scan.pool = "blk";
  std::vector<std::string> scanned;
  const absl::Status stopped = (*engine)->Scan(scan, [&](std::vector<v1::Record> chunk) {
    for (const v1::Record& record : chunk) scanned.push_back(record.id());
    return absl::OkStatus();
  });
  EXPECT_EQ(stopped.code(), absl::StatusCode::kDataLoss) << stopped;
  ASSERT_FALSE(scanned.empty());
  EXPECT_EQ(scanned, std::vector<std::string>(ids.begin(), ids.begin() + scanned.size()));
  EXPECT_FALSE((*results)[scanned.size()].ok());  // It stopped at the first lost one.
  // Verify: the lost blocks' records are one known range, not corrupt records; every
  // record that reads back is checked.
  auto verified = (*engine)->Verify(v1::VerifyRequest(), [] { return false; });
  ASSERT_TRUE(verified.ok()) << verified.status();
  EXPECT_EQ(verified->corrupt_records(), 0u) << verified->DebugString();
  EXPECT_EQ(verified->records_checked(), right);
  ASSERT_EQ(verified->lost_size(), 1) << verified->DebugString();
  EXPECT_EQ(verified->lost(0).first_id(), ids[scanned.size()]);
  EXPECT_EQ(verified->lost(0).last_id(), ids[scanned.size() + lost - 1]);
}

// Lost key ranges as seqs of each pool: within one pool, across pools (each pool
// between them whole, up to its next seq), from the start and to the end, and a blocks
// range by its blocks' last and first seqs; ranges of other families mark nothing.
TEST(SalvageTest, LostRangesBecomeEachPoolsLostSeqs) {
  std::vector<store::StoredPool> pools(3);
  for (uint32_t id : {1, 2, 3}) {
    pools[id - 1].record.set_id(id);
    pools[id - 1].last_seq = 100 * id;  // Next seqs 101, 201, 301.
  }
  pools[1].record.set_first_seq(50);  // Created under a deleted pool's name.
  store::SalvageReport report;
  report.families.push_back({"records", 0, 0, {}});
  auto& records = report.families.back().lost;
  records.push_back({store::RecordKey(1, 10), store::RecordKey(1, 20), ""});
  records.push_back({store::RecordKey(1, 90), store::RecordKey(3, 5), ""});
  records.push_back({"", store::RecordKey(1, 3), ""});
  records.push_back({store::RecordKey(3, 250), "", ""});
  report.families.push_back({"blocks", 0, 0, {}});
  report.families.back().lost.push_back(
      {store::IndexedBlockKey(2, 60, 70), store::IndexedBlockKey(2, 90, 99), ""});
  // Pool 3's first blocks, from the seq its records range starts at too: one range
  // (the catalog keys ranges by pool and first seq, so two would be one entry,
  // whichever was written last: found by the corruption test, a block-mode pool whose
  // tail and first blocks were both lost read NOT_FOUND past its blocks).
  report.families.back().lost.push_back(
      {store::IndexedBlockKey(2, 190, 200), store::IndexedBlockKey(3, 3, 9), ""});
  report.families.push_back({"catalog", 0, 0, {}});
  report.families.back().lost.push_back({"", "", ""});
  std::vector<std::tuple<uint32_t, uint64_t, uint64_t>> got;
  for (const store::Store::LostSeqs& lost : LostSeqsOf(report, pools)) {
    got.emplace_back(lost.pool_id, lost.first, lost.last);
  }
  // Each pool's ranges in order, merged where they overlap or touch: pool 2's blocks
  // range lies in its records range, pool 3's blocks range ([1, 2]) in its [1, 4].
  EXPECT_EQ(got, (std::vector<std::tuple<uint32_t, uint64_t, uint64_t>>{
                     {1, 1, 2}, {1, 11, 19}, {1, 91, 100},
                     {2, 50, 200},
                     {3, 1, 4}, {3, 251, 300}}));
}

TEST(SalvageTest, TheReportNamesPoolsAndSeqs) {
  store::SalvageReport report;
  report.probe_seeks = 180;
  report.families.push_back({"records", 2970, 300000, {}});
  report.families.back().lost.push_back(
      {store::RecordKey(1, 1500), store::RecordKey(1, 1533), "Corruption: block checksum mismatch"});
  report.families.back().lost.push_back({"", store::RecordKey(2, 7), "Corruption: x"});
  report.families.push_back({"catalog", 12, 400, {}});
  report.families.back().lost.push_back({"P", "", "Corruption: y"});
  std::vector<store::StoredPool> pools(1);
  pools[0].record.set_id(1);
  pools[0].record.set_name("web");
  EXPECT_EQ(SalvageReportText(report, pools),
            "records             2970 entries       300000 bytes copied, 2 key range(s) lost\n"
            "  lost: web/1500 < keys < web/1533\n"
            "    Corruption: block checksum mismatch\n"
            "  lost: (start) < keys < pool#2/7\n"
            "    Corruption: x\n"
            "catalog               12 entries          400 bytes copied, 1 key range(s) lost\n"
            "  lost: 0x50 < keys < (end)\n"
            "    Corruption: y\n"
            "3 key range(s) lost (180 seeks to find where damage ends)\n");
}

}  // namespace
}  // namespace dictlog::service
