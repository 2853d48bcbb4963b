// Salvage end to end: a store with a damaged records table, salvaged into a new one
// that a LogEngine opens: every record outside the damaged block reads back, the
// pools take appends past every id given before, and the damaged store is unchanged.
#include "server/daemon/salvage.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

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
  for (size_t i = 0; i < ids.size(); ++i) {
    if ((*results)[i].ok()) {
      ASSERT_EQ((*results)[i]->payload(), lines[i]) << ids[i];
      ++right;
    }
  }
  EXPECT_GT(right, ids.size() - 200);  // One table block's records at most.
  EXPECT_LT(right, ids.size());
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
