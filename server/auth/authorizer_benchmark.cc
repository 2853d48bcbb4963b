// Cost of authenticating one call: SHA-256 of the presented token plus a constant-time
// comparison against every configured digest, for 1..1024 configured tokens.
//   bazel run -c opt //server/auth:authorizer_benchmark
#include <benchmark/benchmark.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "server/auth/authorizer.h"

namespace dictlog::auth {
namespace {

void BM_Authenticate(benchmark::State& state) {
  std::string file;
  for (int i = 0; i < state.range(0); ++i) {
    absl::StrAppend(&file, "token-", 1000000000 + i, "-abcdef reader\n");
  }
  absl::StatusOr<std::vector<TokenEntry>> entries = ParseTokenFile(file);
  if (!entries.ok()) {
    state.SkipWithError("bad tokens file");
    return;
  }
  const Authorizer authorizer(*std::move(entries));
  const std::string header = absl::StrCat("Bearer token-", 1000000000, "-abcdef");
  for (auto _ : state) {
    benchmark::DoNotOptimize(authorizer.Authenticate(header));
  }
}
BENCHMARK(BM_Authenticate)->Arg(1)->Arg(16)->Arg(1024);

}  // namespace
}  // namespace dictlog::auth

BENCHMARK_MAIN();
