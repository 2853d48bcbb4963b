// Writes the fixture store server/engine/testdata/sst_v1_store/ (tests only): table
// files written with the records family's RocksDB options as they were before ADR 0024
// (4 KiB data blocks searched by binary search only, 10-bit Bloom filters), as of main at
// 7e970d7. A record-mode pool "recs" holds codec::SyntheticLogLines(1200, 11) (1,200
// records; a dictionary trained on them re-compresses them), a block-mode pool "blks"
// (2 KiB indexed blocks) codec::SyntheticLogLines(600, 12); categories alternate
// rec-a/rec-b and blk-a/blk-b. The store is a backup (a RocksDB checkpoint): memtables
// flushed, every record in table files, no WAL to replay. sst_v1_store_test checks that
// today's code reads every record of it. Usage:
//   make_sst_v1_store DIR   (DIR must not exist; DIR/store is the fixture)
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "codec/test_dictionary.h"
#include "server/engine/log_engine.h"

namespace {

using dictlog::engine::AppendInput;
using dictlog::engine::LogEngine;

bool AppendAll(LogEngine& engine, const std::vector<std::string>& lines, const char* even,
               const char* odd) {
  for (size_t start = 0; start < lines.size(); start += 100) {
    std::vector<AppendInput> batch;
    for (size_t i = start; i < std::min(lines.size(), start + 100); ++i) {
      batch.push_back({i % 2 == 0 ? even : odd, lines[i]});
    }
    auto appended = engine.Append(batch);
    if (!appended.ok()) {
      std::fprintf(stderr, "append: %s\n", appended.status().ToString().c_str());
      return false;
    }
  }
  return true;
}

int Make(const std::string& dir) {
  std::filesystem::create_directories(dir);
  dictlog::engine::EngineOptions options;
  options.store.path = dir + "/live";
  options.backup_root = dir;
  options.auto_train = false;
  options.default_pool_options.set_dictionary_bytes(4096);
  options.routes = {{"", "rec-", "recs"}, {"", "blk-", "blks"}};
  dictlog::v1::PoolOptions block;
  block.set_storage_mode(dictlog::v1::STORAGE_MODE_BLOCK);
  block.set_block_bytes(2048);
  options.pools = {{"blks", block}};
  auto engine = LogEngine::Open(options);
  if (!engine.ok()) {
    std::fprintf(stderr, "%s\n", engine.status().ToString().c_str());
    return 1;
  }
  if (!AppendAll(**engine, dictlog::codec::SyntheticLogLines(1200, 11), "rec-a", "rec-b") ||
      !AppendAll(**engine, dictlog::codec::SyntheticLogLines(600, 12), "blk-a", "blk-b")) {
    return 1;
  }
  dictlog::v1::TrainDictionaryRequest train;
  train.set_pool("recs");
  train.set_activate(true);
  dictlog::v1::RecompressRequest recompress;
  recompress.set_pool("recs");
  if (!(*engine)->TrainDictionary(train).ok() || !(*engine)->Recompress(recompress).ok() ||
      !(*engine)->WaitForRecompressForTest("recs", absl::Seconds(60))) {
    std::fprintf(stderr, "training or re-compression failed\n");
    return 1;
  }
  dictlog::v1::BackupRequest backup;
  backup.set_dir(dir + "/store");
  auto copied = (*engine)->Backup(backup);
  if (!copied.ok()) {
    std::fprintf(stderr, "backup: %s\n", copied.status().ToString().c_str());
    return 1;
  }
  std::printf("%s\n%s\n%s\n", copied->ShortDebugString().c_str(),
              (*engine)->GetPool("recs")->ShortDebugString().c_str(),
              (*engine)->GetPool("blks")->ShortDebugString().c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_sst_v1_store DIR\n");
    return 2;
  }
  return Make(argv[1]);
}
