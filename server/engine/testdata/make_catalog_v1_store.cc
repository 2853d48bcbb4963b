// Writes the fixture store server/engine/testdata/catalog_v1_store/ (tests only), with
// the catalog as it was while server/store/catalog.proto stored dictlog.v1 messages
// (PoolOptions, DictionaryEvaluation, RecompressStatus): pool "tuned" (record mode,
// every option away from its default), pool "blocky" (block mode, compact
// dictionaries), 400 records in "tuned", a trained and activated dictionary with its
// evaluation, and a finished re-compression job. catalog_v1_store_test checks that
// today's code reads every one of those fields. Prints what it wrote. Usage:
//   make_catalog_v1_store DIR   (DIR must not exist)
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_format.h"
#include "server/engine/log_engine.h"

namespace dictlog::engine {
namespace {

int Fail(const absl::Status& status) {
  std::fprintf(stderr, "%s\n", status.ToString().c_str());
  return 1;
}

v1::PoolOptions Tuned() {
  v1::PoolOptions options;
  options.set_compression_level(7);
  options.set_dictionary_bytes(4096);
  options.set_storage_mode(v1::STORAGE_MODE_RECORD);
  options.set_dictionary_mode(v1::DICTIONARY_MODE_FULL);
  options.set_block_bytes(2048);
  options.set_compact_compression_level(11);
  return options;
}

v1::PoolOptions Blocky() {
  v1::PoolOptions options;
  options.set_compression_level(-5);
  options.set_dictionary_bytes(8192);
  options.set_storage_mode(v1::STORAGE_MODE_BLOCK);
  options.set_dictionary_mode(v1::DICTIONARY_MODE_COMPACT);
  options.set_block_bytes(16384);
  options.set_compact_compression_level(12);
  return options;
}

// The payloads of the records appended (AppendInput only points at them).
std::vector<std::string> Payloads(int count) {
  std::vector<std::string> payloads;
  for (int i = 0; i < count; ++i) {
    payloads.push_back(absl::StrFormat(
        "081109 2035%02d %d INFO dfs.DataNode$PacketResponder: Received block "
        "blk_%d of size %d from /10.250.%d.%d", i % 60, 100 + i % 37, 7000000 + i * 13,
        67108864 - i * 7, i % 19, i % 251));
  }
  return payloads;
}

int Make(const std::string& dir) {
  EngineOptions options;
  options.store.path = dir;
  options.auto_train = false;
  auto engine = LogEngine::Open(options);
  if (!engine.ok()) return Fail(engine.status());
  for (const auto& [name, pool_options] : {std::make_pair("tuned", Tuned()),
                                           std::make_pair("blocky", Blocky())}) {
    auto info = (*engine)->CreatePool(name, pool_options);
    if (!info.ok()) return Fail(info.status());
    std::printf("pool %s\n", info->DebugString().c_str());
  }
  const std::vector<std::string> payloads = Payloads(400);
  std::vector<AppendInput> records;
  for (const std::string& payload : payloads) records.push_back({"tuned", payload});
  auto ids = (*engine)->Append(records);
  if (!ids.ok()) return Fail(ids.status());
  v1::TrainDictionaryRequest train;
  train.set_pool("tuned");
  train.set_activate(true);
  auto trained = (*engine)->TrainDictionary(train);
  if (!trained.ok()) return Fail(trained.status());
  std::printf("trained %s\n", trained->DebugString().c_str());
  v1::RecompressRequest recompress;
  recompress.set_pool("tuned");
  auto started = (*engine)->Recompress(recompress);
  if (!started.ok()) return Fail(started.status());
  if (!(*engine)->WaitForRecompressForTest("tuned", absl::Minutes(1))) {
    return Fail(absl::DeadlineExceededError("re-compression did not finish"));
  }
  auto status = (*engine)->GetRecompressStatus(recompress);
  if (!status.ok()) return Fail(status.status());
  std::printf("recompress %s\n", status->DebugString().c_str());
  for (const char* id : {"tuned/1", "tuned/2", "tuned/400"}) {
    auto record = (*engine)->Get(id);
    if (!record.ok()) return Fail(record.status());
    std::printf("%s %s\n", id, absl::CHexEscape(record->payload()).c_str());
  }
  return 0;
}

}  // namespace
}  // namespace dictlog::engine

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_catalog_v1_store DIR\n");
    return 2;
  }
  return dictlog::engine::Make(argv[1]);
}
