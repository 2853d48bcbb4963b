// The v1 block-mode fixture store (server/engine/testdata/v1_block_store, written by
// make_v1_block_store with the code before indexed blocks) as its tests see it: a fresh
// copy to open, and the records it holds. Test-only; functions are thread-compatible.
#ifndef DICTLOG_SERVER_ENGINE_V1_BLOCK_FIXTURE_H_
#define DICTLOG_SERVER_ENGINE_V1_BLOCK_FIXTURE_H_

#include <cstddef>
#include <string>
#include <vector>

namespace dictlog::engine {

// A fresh directory holding a copy of the fixture store.
std::string V1BlockFixtureCopy();

// The fixture's records in append order; categories alternate app-a, app-b (both of
// its batches of lines have an even size).
std::vector<std::string> V1BlockFixtureLines();

// The category of the record at `index` in append order (a literal: AppendInput views
// its category).
const char* V1BlockFixtureCategory(size_t index);

}  // namespace dictlog::engine

#endif  // DICTLOG_SERVER_ENGINE_V1_BLOCK_FIXTURE_H_
