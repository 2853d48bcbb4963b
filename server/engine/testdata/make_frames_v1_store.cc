// Writes the fixture store server/engine/testdata/frames_v1_store/ (tests only): record
// values as the code before ADR 0049 wrote them, every frame whole (encoding 1: a
// magicless zstd frame), none short. Made with main at b86ed44. Three record-mode pools:
//   "recs":  codec::SyntheticLogLines(800, 31), categories alternating rec-a/rec-b; a
//            4 KiB dictionary trained on them and activated, the 800 re-compressed with
//            it; then codec::SyntheticLogLines(300, 32) (all rec-a) compressed at append.
//   "plain": codec::SyntheticLogLines(200, 33), category plain-x, no dictionary: frames
//            without a dictionary id (level 3).
//   "raw":   kRawPayloads, category raw-x: values stored raw (bare, or with a flags byte).
// The store is a backup (a RocksDB checkpoint): every record in table files, no WAL to
// replay. frames_v1_store_test checks that today's code reads every record of it.
// Usage:
//   make_frames_v1_store DIR   (DIR must not exist; DIR/store is the fixture)
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "codec/test_dictionary.h"
#include "server/engine/log_engine.h"

namespace {

using dictlog::engine::AppendInput;
using dictlog::engine::LogEngine;

// Too short or varied to compress; the second starts with a flags byte.
const char* const kRawPayloads[] = {"q7#Zx!9", "\x01k9", "Zq"};

bool Append(LogEngine& engine, const std::vector<std::string>& lines, const char* even,
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
  options.routes = {{"", "rec-", "recs"}, {"", "plain-", "plain"}, {"", "raw-", "raw"}};
  auto engine = LogEngine::Open(options);
  if (!engine.ok()) {
    std::fprintf(stderr, "%s\n", engine.status().ToString().c_str());
    return 1;
  }
  if (!Append(**engine, dictlog::codec::SyntheticLogLines(800, 31), "rec-a", "rec-b")) return 1;
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
  const std::vector<std::string> raw(std::begin(kRawPayloads), std::end(kRawPayloads));
  if (!Append(**engine, dictlog::codec::SyntheticLogLines(300, 32), "rec-a", "rec-a") ||
      !Append(**engine, dictlog::codec::SyntheticLogLines(200, 33), "plain-x", "plain-x") ||
      !Append(**engine, raw, "raw-x", "raw-x")) {
    return 1;
  }
  dictlog::v1::BackupRequest backup;
  backup.set_dir(dir + "/store");
  auto copied = (*engine)->Backup(backup);
  if (!copied.ok()) {
    std::fprintf(stderr, "backup: %s\n", copied.status().ToString().c_str());
    return 1;
  }
  std::printf("%s\n", copied->ShortDebugString().c_str());
  for (const char* pool : {"recs", "plain", "raw"}) {
    std::printf("%s\n", (*engine)->GetPool(pool)->ShortDebugString().c_str());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_frames_v1_store DIR\n");
    return 2;
  }
  return Make(argv[1]);
}
