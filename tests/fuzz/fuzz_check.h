// FUZZ_REQUIRE: the oracle of the fuzz targets. A violated property prints what broke
// and aborts, which libFuzzer reports as a crash (and saves the input) and which fails
// the gcc replay test. Used from libFuzzer's single thread.
#ifndef DICTLOG_TESTS_FUZZ_FUZZ_CHECK_H_
#define DICTLOG_TESTS_FUZZ_FUZZ_CHECK_H_

#include <cstdio>
#include <cstdlib>
#include <string>

#define FUZZ_REQUIRE(condition, what)                                              \
  do {                                                                             \
    if (!(condition)) {                                                            \
      std::fprintf(stderr, "%s:%d: fuzz property violated: %s (%s)\n", __FILE__, \
                   __LINE__, #condition, std::string(what).c_str());               \
      std::abort();                                                                \
    }                                                                              \
  } while (0)

#endif  // DICTLOG_TESTS_FUZZ_FUZZ_CHECK_H_
