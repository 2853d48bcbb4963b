// Test-only: the server side the service fuzz targets call into: a real LogEngine
// (real RocksDB) on a fresh temporary directory, with its two gRPC services, holding
// three pools with real records and imported real dictionaries:
//   HDFS     record mode, full dictionary, some records from before its import
//   Apache   record mode, compact dictionary
//   blocks   block mode (1 KiB blocks), full dictionary; category OpenSSH routes here
// Limits are lowered (64 KiB records, 50 records per batch or MultiGet, no automatic
// training) so that every input stays cheap. Inputs change the store, so the engine
// is rebuilt from scratch every `runs_per_engine` inputs to keep it small.
//
// Keep a fixture for the whole process (it closes its engine at exit itself).
// Not thread-safe: libFuzzer and the replay test call from one thread.
#ifndef DICTLOG_TESTS_FUZZ_ENGINE_FIXTURE_H_
#define DICTLOG_TESTS_FUZZ_ENGINE_FIXTURE_H_

#include <memory>
#include <string>

#include "server/engine/log_engine.h"
#include "server/service/admin_service.h"
#include "server/service/engine_slot.h"
#include "server/service/log_store_service.h"

namespace dictlog::fuzz {

class EngineFixture {
 public:
  explicit EngineFixture(int runs_per_engine);
  EngineFixture(const EngineFixture&) = delete;
  EngineFixture& operator=(const EngineFixture&) = delete;
  ~EngineFixture();

  // Call before each input: rebuilds the engine when it has served its runs.
  void BeforeInput();

  engine::LogEngine& engine() { return *engine_; }
  service::LogStoreService& log_store() { return *log_store_; }
  service::AdminService& admin() { return *admin_; }

  // Closes the engine and deletes its directory (also at exit).
  void Close();

 private:
  void Build();

  const int runs_per_engine_;
  int runs_ = 0;
  std::string dir_;
  std::unique_ptr<engine::LogEngine> engine_;
  std::unique_ptr<service::EngineSlot> slot_;  // Names engine_ to the services.
  std::unique_ptr<service::LogStoreService> log_store_;
  std::unique_ptr<service::AdminService> admin_;
};

}  // namespace dictlog::fuzz

#endif  // DICTLOG_TESTS_FUZZ_ENGINE_FIXTURE_H_
