#include "tests/fuzz/engine_fixture.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/fuzz_data.h"

namespace dictlog::fuzz {
namespace {

std::string MakeTempDir() {
  const char* base = std::getenv("TEST_TMPDIR");
  std::string pattern = absl::StrCat(base != nullptr ? base : "/tmp", "/dictlog-fuzz-XXXXXX");
  FUZZ_REQUIRE(mkdtemp(pattern.data()) != nullptr, pattern);
  return pattern;
}

engine::EngineOptions FixtureOptions(const std::string& dir) {
  engine::EngineOptions options;
  options.store.path = dir;
  options.max_record_bytes = 64 << 10;
  options.max_batch_records = 50;
  options.max_multiget_ids = 50;
  options.auto_train = false;
  options.routes = {{"OpenSSH", "", "blocks"}};
  v1::PoolOptions compact;
  compact.set_dictionary_mode(v1::DICTIONARY_MODE_COMPACT);
  compact.set_dictionary_bytes(4096);
  v1::PoolOptions blocks;
  blocks.set_storage_mode(v1::STORAGE_MODE_BLOCK);
  blocks.set_block_bytes(1024);
  blocks.set_dictionary_bytes(4096);
  v1::PoolOptions full;
  full.set_dictionary_bytes(4096);
  options.pools = {{"HDFS", full}, {"Apache", compact}, {"blocks", blocks}};
  return options;
}

void AppendLines(engine::LogEngine& engine, absl::string_view category, size_t from,
                 size_t count) {
  const std::vector<std::string> lines = DataLines(category);
  std::vector<engine::AppendInput> inputs;
  for (size_t i = from; i < from + count && i < lines.size(); ++i) {
    inputs.push_back({category, lines[i]});
  }
  FUZZ_REQUIRE(engine.Append(inputs).ok(), category);
}

void Import(engine::LogEngine& engine, absl::string_view pool, const char* file) {
  v1::ImportDictionaryRequest request;
  request.set_pool(std::string(pool));
  request.set_content(ReadDataFile(file));
  request.set_activate(true);
  FUZZ_REQUIRE(engine.ImportDictionary(request).ok(), file);
}

// The fixture whose engine is open, closed by CloseAtExit. Its destructor would run
// too late at exit: after the destructors of RocksDB's own statics.
EngineFixture* g_open_fixture = nullptr;

void CloseAtExit() {
  if (g_open_fixture != nullptr) g_open_fixture->Close();
}

}  // namespace

EngineFixture::EngineFixture(int runs_per_engine) : runs_per_engine_(runs_per_engine) {}

EngineFixture::~EngineFixture() { Close(); }

void EngineFixture::BeforeInput() {
  if (engine_ != nullptr && runs_ < runs_per_engine_) {
    ++runs_;
    return;
  }
  Close();
  Build();
  runs_ = 1;
}

void EngineFixture::Build() {
  dir_ = MakeTempDir();
  auto engine = engine::LogEngine::Open(FixtureOptions(dir_));
  FUZZ_REQUIRE(engine.ok(), engine.status().ToString());
  engine_ = *std::move(engine);
  // Registered after RocksDB's first Open created its statics, so it runs before
  // their destructors.
  static const bool registered = (std::atexit(&CloseAtExit), true);
  (void)registered;
  g_open_fixture = this;
  AppendLines(*engine_, "HDFS", 0, 5);  // Raw records, from before any dictionary.
  Import(*engine_, "HDFS", kFixtureDictionaries[0].file);
  Import(*engine_, "Apache", kFixtureDictionaries[1].file);
  Import(*engine_, "blocks", kFixtureDictionaries[2].file);
  AppendLines(*engine_, "HDFS", 5, 15);
  AppendLines(*engine_, "Apache", 0, 20);
  AppendLines(*engine_, "OpenSSH", 0, 30);  // Seals a few 1 KiB blocks.
  slot_ = std::make_unique<service::EngineSlot>(engine_.get());
  log_store_ = std::make_unique<service::LogStoreService>(slot_.get());
  admin_ = std::make_unique<service::AdminService>(slot_.get());
}

void EngineFixture::Close() {
  if (g_open_fixture == this) g_open_fixture = nullptr;
  admin_.reset();
  log_store_.reset();
  slot_.reset();
  engine_.reset();
  if (!dir_.empty()) std::filesystem::remove_all(dir_);
  dir_.clear();
}

}  // namespace dictlog::fuzz
