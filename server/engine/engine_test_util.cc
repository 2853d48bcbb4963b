#include "server/engine/engine_test_util.h"

#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace dictlog::engine {

absl::Status TrainAndActivate(LogEngine& engine, const std::string& pool) {
  v1::TrainDictionaryRequest train;
  train.set_pool(pool);
  ASSIGN_OR_RETURN(const v1::TrainDictionaryResponse trained, engine.TrainDictionary(train));
  v1::ActivateDictionaryRequest activate;
  activate.set_pool(pool);
  activate.set_id(trained.dictionary().id());
  return engine.ActivateDictionary(activate).status();
}

absl::Status SetIndexedBlocksFrom(const store::Store::Options& options,
                                  const std::string& pool, uint64_t seq) {
  ASSIGN_OR_RETURN(std::unique_ptr<store::Store> store, store::Store::Open(options));
  ASSIGN_OR_RETURN(const std::vector<store::StoredPool> pools, store->LoadPools());
  for (const store::StoredPool& stored : pools) {
    if (stored.record.name() != pool) continue;
    storage::PoolRecord record = stored.record;
    record.set_indexed_blocks_from_seq(seq);
    return store->PutPool(record);
  }
  return absl::NotFoundError(absl::StrCat("no pool '", pool, "'"));
}

}  // namespace dictlog::engine
