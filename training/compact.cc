#include "training/compact.h"

#include <algorithm>
#include <numeric>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace dictlog::trainer {

FseTable Renormalize(const FseTable& table, int accuracy_log) {
  if (table.accuracy_log <= accuracy_log) return table;
  const int cells = 1 << accuracy_log;
  // A -1 count (below one cell) weighs as 1: the trainer's floor for unseen symbols.
  std::vector<int> weight(table.counts.size());
  for (size_t s = 0; s < weight.size(); ++s) weight[s] = std::abs(table.counts[s]);
  std::vector<size_t> order(weight.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return weight[a] > weight[b]; });
  // Keep the symbols seen in the samples (weight above the trainer's floor of 1), at
  // most half the cells' worth, and always two: a table needs two symbols.
  std::vector<size_t> kept;
  for (size_t s : order) {
    if (weight[s] == 0) break;
    if (kept.size() >= 2 && (weight[s] < 2 || static_cast<int>(kept.size()) >= cells / 2)) break;
    kept.push_back(s);
  }
  int64_t total = 0;
  for (size_t s : kept) total += weight[s];
  FseTable out;
  out.accuracy_log = accuracy_log;
  out.counts.assign(kept.empty() ? 0 : *std::max_element(kept.begin(), kept.end()) + 1, 0);
  int used = 0;
  for (size_t s : kept) {
    const int share = static_cast<int>((weight[s] * cells + total / 2) / total);
    out.counts[s] = static_cast<int16_t>(std::max(1, share));
    used += out.counts[s];
  }
  // Rounding leaves the sum off by a few cells: settle it on the most probable symbols.
  for (size_t i = 0; used != cells; i = (i + 1) % kept.size()) {
    int16_t& c = out.counts[kept[i]];
    if (used < cells) {
      ++c;
      ++used;
    } else if (c > 1) {
      --c;
      --used;
    }
  }
  return out;
}

absl::StatusOr<std::string> MakeCompact(absl::string_view dictionary,
                                        const CompactOptions& options) {
  if (options.accuracy_log < codec::kMinAccuracyLog || options.accuracy_log > codec::kMaxOffsetLog) {
    return absl::InvalidArgumentError(absl::StrCat(
        "compact accuracy log ", options.accuracy_log, " outside ", codec::kMinAccuracyLog, "..",
        codec::kMaxOffsetLog));
  }
  absl::StatusOr<codec::DictionaryParts> parts = codec::ParseDictionary(dictionary);
  if (!parts.ok()) return absl::InvalidArgumentError(parts.status().message());
  parts->offsets = Renormalize(parts->offsets, options.accuracy_log);
  parts->match_lengths = Renormalize(parts->match_lengths, options.accuracy_log);
  parts->literal_lengths = Renormalize(parts->literal_lengths, options.accuracy_log);
  return codec::SerializeDictionary(*parts);
}

}  // namespace dictlog::trainer
