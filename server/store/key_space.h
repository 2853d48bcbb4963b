// Key space search for the salvage (Store::SalvageInto): finding the first key a
// RocksDB seek can read past a damaged table block. Keys are compared as RocksDB's
// bytewise comparator does; the search runs over the strings of one fixed width,
// read as big-endian numbers, between which no shorter key lies (a key of at most
// `width` bytes is either one of them or falls between two consecutive ones only if it
// is longer). Stateless; safe from any thread.
#ifndef DICTLOG_SERVER_STORE_KEY_SPACE_H_
#define DICTLOG_SERVER_STORE_KEY_SPACE_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace dictlog::store {

// The smallest string of `width` bytes (width >= key.size()) greater than `key`.
// nullopt if there is none (key is `width` bytes of 0xff).
std::optional<std::string> NextOfWidth(absl::string_view key, size_t width);

// a + 2^bit, both `width`-byte big-endian numbers; nullopt on overflow.
std::optional<std::string> AddPowerOfTwo(absl::string_view a, size_t bit);

// floor((a + b) / 2) of two numbers of the same width.
std::string Midpoint(absl::string_view a, absl::string_view b);

// The smallest `width`-byte string t > `after` (or, with `from_start`, t >= the
// `width` zero bytes) for which `passes(t)` is true, given that it is false from the
// start of that range up to some point and true from there on (a seek fails inside a
// damaged block's key range and succeeds past it). Gallops up by powers of two from
// the start, then bisects. nullopt if it is true nowhere. `passes`' errors are
// returned as they are; `*probes` counts its calls.
absl::StatusOr<std::optional<std::string>> FirstPassing(
    absl::string_view after, bool from_start, size_t width,
    absl::FunctionRef<absl::StatusOr<bool>(const std::string&)> passes, uint64_t* probes);

}  // namespace dictlog::store

#endif  // DICTLOG_SERVER_STORE_KEY_SPACE_H_
