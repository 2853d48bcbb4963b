// Helpers for the engine's tests: steps several tests take the same way. Test-only.
// Thread contract: call with no other thread using the engine or the store.
#ifndef DICTLOG_SERVER_ENGINE_ENGINE_TEST_UTIL_H_
#define DICTLOG_SERVER_ENGINE_ENGINE_TEST_UTIL_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "server/engine/log_engine.h"
#include "server/store/store.h"

namespace dictlog::engine {

// Trains a dictionary for `pool` on its records and activates it.
absl::Status TrainAndActivate(LogEngine& engine, const std::string& pool);

// With no engine open on the store: makes pool `pool` (block mode) hold its records
// from `seq` on in indexed blocks and those before it behind entry values, as a store
// from before indexed blocks (ADR 0016) does.
absl::Status SetIndexedBlocksFrom(const store::Store::Options& options,
                                  const std::string& pool, uint64_t seq);

}  // namespace dictlog::engine

#endif  // DICTLOG_SERVER_ENGINE_ENGINE_TEST_UTIL_H_
