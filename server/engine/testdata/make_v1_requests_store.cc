// Writes the fixture store server/engine/testdata/v1_requests_store/ (tests only):
// two appends with client request ids, "old-req-1" (pools a and b) and "old-req-2"
// (pool a). Built at commit 84e03d9, before request ids were scoped per principal,
// it wrote the requests family's keys as the bare request id; v1_requests_store_test
// checks that today's code opens and reads such a store. Usage:
//   make_v1_requests_store DIR   (DIR must not exist)
#include <cstdio>

#include "server/engine/log_engine.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_v1_requests_store DIR\n");
    return 2;
  }
  dictlog::engine::EngineOptions options;
  options.store.path = argv[1];
  options.store.request_window = absl::Hours(24 * 365 * 100);
  options.auto_train = false;
  auto engine = dictlog::engine::LogEngine::Open(options);
  if (!engine.ok()) {
    std::fprintf(stderr, "%s\n", engine.status().ToString().c_str());
    return 1;
  }
  const std::vector<dictlog::engine::AppendInput> first = {{"a", "one"}, {"b", "two"}};
  const std::vector<dictlog::engine::AppendInput> second = {{"a", "three"}};
  for (const auto& [records, id] : {std::make_pair(first, "old-req-1"),
                                    std::make_pair(second, "old-req-2")}) {
    auto ids = (*engine)->Append(records, id);
    if (!ids.ok()) {
      std::fprintf(stderr, "%s\n", ids.status().ToString().c_str());
      return 1;
    }
    for (const std::string& record_id : *ids) std::printf("%s %s\n", id, record_id.c_str());
  }
  return 0;
}
