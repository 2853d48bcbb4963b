// The request methods of the dictlog.v1 services, as the service fuzz target drives
// them: one entry per RPC, which parses its request message from raw bytes and calls
// the service handler (LogStoreService / AdminService) on the fixture's engine. Scan
// is the exception: its handler needs a live gRPC stream (grpc::ServerWriter cannot be
// built outside a call), so it runs the request through LogEngine::Scan as the handler
// does. Shared by the fuzz target and make_seeds (which writes one seed per method).
//
// Not thread-safe (the fixture is not).
#ifndef DICTLOG_TESTS_FUZZ_SERVICE_METHODS_H_
#define DICTLOG_TESTS_FUZZ_SERVICE_METHODS_H_

#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"
#include "tests/fuzz/engine_fixture.h"

namespace dictlog::fuzz {

struct ServiceMethod {
  const char* name;
  // Parses `request` (a serialized request message) and calls the handler. Returns
  // false if the bytes do not parse (nothing called).
  bool (*call)(EngineFixture& fixture, absl::string_view request);
};

// The methods; a fuzz input's first byte picks one (modulo the count).
extern const ServiceMethod kServiceMethods[];
extern const size_t kServiceMethodCount;

// Index of the method `name` in kServiceMethods; aborts if there is none.
uint8_t ServiceMethodIndex(absl::string_view name);

}  // namespace dictlog::fuzz

#endif  // DICTLOG_TESTS_FUZZ_SERVICE_METHODS_H_
