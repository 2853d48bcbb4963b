// KeepJudge: which records a re-compression job leaves as they are stored (ADR 0051).
// A job re-encodes a pool's records with its active dictionary; records of an earlier
// dictionary that the active one stores far larger (data that dictionary was made for:
// a format the pool alternates with, the data before a drift) are better left as they
// are. The judgement is per earlier dictionary, over the job's values of it so far: a
// dictionary's values are kept once at least kMinValues of them have been judged and
// the active dictionary stores them, all together, at least 1.5x as large. So a
// retrained dictionary's small per-record losses on the same data (a few records a
// little larger, most smaller) never hold on to the dictionary it replaces; the first
// kMinValues values of a dictionary that deserves keeping are re-encoded all the same.
//
// Thread safety: none; one job's thread uses it, for one job run (a resumed job starts
// judging again).
#ifndef DICTLOG_SERVER_DICTIONARY_KEEP_JUDGE_H_
#define DICTLOG_SERVER_DICTIONARY_KEEP_JUDGE_H_

#include <cstdint>
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"

namespace dictlog::dictionary {

class KeepJudge {
 public:
  static constexpr uint64_t kMinValues = 32;

  // Counts one value (a record, or a block) of dictionary `old_id`, stored in `before`
  // bytes, that the target would store in `after` bytes; true if it is to be kept as
  // stored.
  bool Keep(uint32_t old_id, uint64_t before, uint64_t after);
  // As above, for a dictionary whose values may be kept only if `keepable()`, asked
  // once per `old_id` and remembered (false: never kept, nothing tallied).
  bool Keep(uint32_t old_id, uint64_t before, uint64_t after,
            absl::FunctionRef<bool()> keepable);

 private:
  struct Tally {
    std::optional<bool> keepable;  // Unknown until first asked.
    uint64_t values = 0;
    uint64_t before = 0;
    uint64_t after = 0;
  };
  absl::flat_hash_map<uint32_t, Tally> tallies_;
};

}  // namespace dictlog::dictionary

#endif  // DICTLOG_SERVER_DICTIONARY_KEEP_JUDGE_H_
