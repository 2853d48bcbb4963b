#include "client/batch_limits.h"

namespace dictlog::client {

std::vector<std::pair<size_t, size_t>> SplitIntoBatches(const std::vector<size_t>& sizes,
                                                        BatchLimits limits) {
  std::vector<std::pair<size_t, size_t>> batches;
  size_t begin = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (!limits.Fits(sizes[i])) {
      if (i == begin) return batches;  // max_records 0: nothing ever fits.
      batches.emplace_back(begin, i);
      begin = i;
      limits.Clear();
    }
    limits.Add(sizes[i]);
  }
  if (begin < sizes.size()) batches.emplace_back(begin, sizes.size());
  return batches;
}

}  // namespace dictlog::client
