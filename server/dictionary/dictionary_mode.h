// Which form (full or compact, docs/adr/0005) a pool's next dictionary takes. For
// DICTIONARY_MODE_AUTO the choice rests on what makes a dictionary cold: while few
// dictionaries are live, all of their full tables stay in the CPU caches; with many,
// only the most read pools keep theirs warm, and the rest decode faster with compact
// tables. Pure function; thread-safe.
#ifndef DICTLOG_SERVER_DICTIONARY_DICTIONARY_MODE_H_
#define DICTLOG_SERVER_DICTIONARY_DICTIONARY_MODE_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "proto/dictlog.pb.h"

namespace dictlog::dictionary {

struct ModeInputs {
  v1::DictionaryMode option = v1::DICTIONARY_MODE_AUTO;  // The pool's option.
  uint64_t pool_reads = 0;        // Records read from this pool since start.
  uint64_t all_reads = 0;         // ... from every pool.
  size_t live_dictionaries = 0;   // Active dictionaries across the server.
  // AUTO keeps full dictionaries while at most this many are live, and for pools
  // taking at least 1/full_slots of all reads.
  size_t full_slots = 64;
};

struct ModeChoice {
  v1::DictionaryMode mode = v1::DICTIONARY_MODE_FULL;  // FULL or COMPACT.
  std::string reason;
};

// FULL or COMPACT as the option says; for AUTO (and UNSPECIFIED, which pools created
// before the option existed have), the rule above with its figures in the reason.
ModeChoice ChooseDictionaryMode(const ModeInputs& in);

}  // namespace dictlog::dictionary

#endif  // DICTLOG_SERVER_DICTIONARY_DICTIONARY_MODE_H_
