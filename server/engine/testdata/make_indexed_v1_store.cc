// Writes the fixture store server/engine/testdata/indexed_v1_store/ (tests only): a
// block-mode pool "blks" (1 KiB blocks) whose indexed blocks have the first
// indexed_block_content version (no per-entry checksums; ADR 0016), as of main at
// fbeae58. It holds IndexedV1FixtureLines() (indexed_v1_store_test.cc), categories
// alternating blk-a/blk-b: the first 400 appended 100 a call (blocks sealed by the
// appends, no dictionary), then a dictionary trained, activated and every block
// re-encoded with it, then 200 more 50 a call (blocks with the dictionary), then 6 one
// a call (left in the open tail: single values). The store is a backup (a RocksDB
// checkpoint): every record in table files. Usage:
//   make_indexed_v1_store DIR   (DIR must not exist; DIR/store is the fixture)
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "codec/test_dictionary.h"
#include "server/engine/log_engine.h"

namespace {

using dictlog::engine::AppendInput;
using dictlog::engine::LogEngine;

// Appends lines[from, to) `per_call` a call.
bool AppendRange(LogEngine& engine, const std::vector<std::string>& lines, size_t from,
                 size_t to, size_t per_call) {
  for (size_t start = from; start < to; start += per_call) {
    std::vector<AppendInput> batch;
    for (size_t i = start; i < std::min(to, start + per_call); ++i) {
      batch.push_back({i % 2 == 0 ? "blk-a" : "blk-b", lines[i]});
    }
    auto appended = engine.Append(batch);
    if (!appended.ok()) {
      std::fprintf(stderr, "append: %s\n", appended.status().ToString().c_str());
      return false;
    }
  }
  return true;
}

bool TrainAndRecompress(LogEngine& engine) {
  dictlog::v1::TrainDictionaryRequest train;
  train.set_pool("blks");
  train.set_activate(true);
  dictlog::v1::RecompressRequest recompress;
  recompress.set_pool("blks");
  return engine.TrainDictionary(train).ok() && engine.Recompress(recompress).ok() &&
         engine.WaitForRecompressForTest("blks", absl::Seconds(60));
}

int Make(const std::string& dir) {
  std::filesystem::create_directories(dir);
  dictlog::engine::EngineOptions options;
  options.store.path = dir + "/live";
  options.backup_root = dir;
  options.auto_train = false;
  options.default_pool_options.set_dictionary_bytes(4096);
  options.routes = {{"", "blk-", "blks"}};
  dictlog::v1::PoolOptions block;
  block.set_storage_mode(dictlog::v1::STORAGE_MODE_BLOCK);
  block.set_block_bytes(1024);
  options.pools = {{"blks", block}};
  auto engine = LogEngine::Open(options);
  if (!engine.ok()) {
    std::fprintf(stderr, "%s\n", engine.status().ToString().c_str());
    return 1;
  }
  const std::vector<std::string> lines = dictlog::codec::SyntheticLogLines(606, 27);
  if (!AppendRange(**engine, lines, 0, 400, 100) || !TrainAndRecompress(**engine) ||
      !AppendRange(**engine, lines, 400, 600, 50) || !AppendRange(**engine, lines, 600, 606, 1)) {
    std::fprintf(stderr, "appends, training or re-compression failed\n");
    return 1;
  }
  dictlog::v1::BackupRequest backup;
  backup.set_dir(dir + "/store");
  auto copied = (*engine)->Backup(backup);
  if (!copied.ok()) {
    std::fprintf(stderr, "backup: %s\n", copied.status().ToString().c_str());
    return 1;
  }
  std::printf("%s\n%s\n", copied->ShortDebugString().c_str(),
              (*engine)->GetPool("blks")->ShortDebugString().c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_indexed_v1_store DIR\n");
    return 2;
  }
  return Make(argv[1]);
}
