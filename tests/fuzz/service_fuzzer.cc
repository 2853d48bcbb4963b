// Fuzz target: one request of any dictlog.v1 method, as raw bytes: the first byte
// picks the method (service_methods.h), the rest is parsed as its request message and
// run through the service handler over a real LogEngine (engine_fixture.h).
//
// Properties: no handler crashes or trips a sanitizer; an error is never UNKNOWN or
// INTERNAL; every record an Append or AppendBatch acknowledges reads back with its
// payload and category.
#include <cstdint>

#include "tests/fuzz/engine_fixture.h"
#include "tests/fuzz/service_methods.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace dictlog::fuzz;  // NOLINT: entry point
  if (size == 0) return 0;
  static EngineFixture& fixture = *new EngineFixture(/*runs_per_engine=*/500);
  fixture.BeforeInput();
  const ServiceMethod& method = kServiceMethods[data[0] % kServiceMethodCount];
  method.call(fixture, absl::string_view(reinterpret_cast<const char*>(data) + 1, size - 1));
  return 0;
}
