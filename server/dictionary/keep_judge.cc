#include "server/dictionary/keep_judge.h"

namespace dictlog::dictionary {

bool KeepJudge::Keep(uint32_t old_id, uint64_t before, uint64_t after) {
  return Keep(old_id, before, after, [] { return true; });
}

bool KeepJudge::Keep(uint32_t old_id, uint64_t before, uint64_t after,
                     absl::FunctionRef<bool()> keepable) {
  Tally& tally = tallies_[old_id];
  if (!tally.keepable.has_value()) tally.keepable = keepable();
  if (!*tally.keepable) return false;
  ++tally.values;
  tally.before += before;
  tally.after += after;
  return tally.values >= kMinValues && 2 * tally.after >= 3 * tally.before;
}

}  // namespace dictlog::dictionary
