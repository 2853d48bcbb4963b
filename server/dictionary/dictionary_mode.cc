#include "server/dictionary/dictionary_mode.h"

#include "absl/strings/str_format.h"

namespace dictlog::dictionary {

ModeChoice ChooseDictionaryMode(const ModeInputs& in) {
  if (in.option == v1::DICTIONARY_MODE_FULL) {
    return {v1::DICTIONARY_MODE_FULL, "pool option dictionary_mode=full"};
  }
  if (in.option == v1::DICTIONARY_MODE_COMPACT) {
    return {v1::DICTIONARY_MODE_COMPACT, "pool option dictionary_mode=compact"};
  }
  if (in.live_dictionaries <= in.full_slots) {
    return {v1::DICTIONARY_MODE_FULL,
            absl::StrFormat("auto: %d live dictionaries <= %d, full tables stay cached",
                            in.live_dictionaries, in.full_slots)};
  }
  const double share =
      in.all_reads == 0 ? 0 : static_cast<double>(in.pool_reads) / in.all_reads;
  if (in.pool_reads > 0 && share * in.full_slots >= 1) {
    return {v1::DICTIONARY_MODE_FULL,
            absl::StrFormat("auto: %d live dictionaries > %d, but the pool takes %.2f%% "
                            "of reads >= 1/%d, so its tables stay warm",
                            in.live_dictionaries, in.full_slots, 100 * share,
                            in.full_slots)};
  }
  return {v1::DICTIONARY_MODE_COMPACT,
          absl::StrFormat("auto: %d live dictionaries > %d and the pool takes %.2f%% of "
                          "reads < 1/%d: a cold dictionary, compact decodes it faster",
                          in.live_dictionaries, in.full_slots, 100 * share,
                          in.full_slots)};
}

}  // namespace dictlog::dictionary
