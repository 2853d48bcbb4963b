// Writes the fixture store server/engine/testdata/v1_block_store/ (tests only): a
// block-mode pool "apps" (2 KiB blocks, categories app-a and app-b alternating) in the
// block format of ADR 0007 as of commit ce02c49: every sealed record keeps its own
// entry value in the records family ("entry i of block K"), blocks are keyed by block
// id. 600 records of codec::SyntheticLogLines(600, 7), then a trained dictionary that
// re-compresses them, then 150 records of SyntheticLogLines(150, 8) (sealed with the
// dictionary, the newest left in the open tail). v1_block_store_test checks that
// today's code reads every record of it. Usage:
//   make_v1_block_store DIR   (DIR must not exist; then drop DIR/LOCK and DIR/LOG*)
// It prints the pool's stats line; the records' ids are apps/1..apps/750.
#include <cstdio>

#include "codec/test_dictionary.h"
#include "server/engine/log_engine.h"

namespace {

using dictlog::engine::AppendInput;
using dictlog::engine::LogEngine;

bool AppendAll(LogEngine& engine, const std::vector<std::string>& lines) {
  for (size_t start = 0; start < lines.size(); start += 50) {
    std::vector<AppendInput> batch;
    for (size_t i = start; i < std::min(lines.size(), start + 50); ++i) {
      batch.push_back({i % 2 == 0 ? "app-a" : "app-b", lines[i]});
    }
    auto appended = engine.Append(batch);
    if (!appended.ok()) {
      std::fprintf(stderr, "append: %s\n", appended.status().ToString().c_str());
      return false;
    }
  }
  return true;
}

int Make(const char* dir) {
  dictlog::engine::EngineOptions options;
  options.store.path = dir;
  options.auto_trainer.min_bytes_multiple = 8;  // 8 x 4 KiB = 32 KiB.
  options.default_pool_options.set_dictionary_bytes(4096);
  options.routes = {{"", "app-", "apps"}};
  dictlog::v1::PoolOptions block;
  block.set_storage_mode(dictlog::v1::STORAGE_MODE_BLOCK);
  block.set_block_bytes(2048);
  options.pools = {{"apps", block}};
  auto engine = LogEngine::Open(options);
  if (!engine.ok()) {
    std::fprintf(stderr, "%s\n", engine.status().ToString().c_str());
    return 1;
  }
  if (!AppendAll(**engine, dictlog::codec::SyntheticLogLines(600, 7))) return 1;
  if (!(*engine)->WaitForAutoTrainingForTest(absl::Seconds(60))) return 1;
  dictlog::v1::RecompressRequest request;
  request.set_pool("apps");
  if (!(*engine)->Recompress(request).ok() ||
      !(*engine)->WaitForRecompressForTest("apps", absl::Seconds(60))) {
    return 1;
  }
  if (!AppendAll(**engine, dictlog::codec::SyntheticLogLines(150, 8))) return 1;
  std::printf("%s\n", (*engine)->GetPool("apps")->ShortDebugString().c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_v1_block_store DIR\n");
    return 2;
  }
  return Make(argv[1]);
}
