#include "server/cluster/rebuild_throttle.h"

#include <algorithm>

namespace dictlog::cluster {

RebuildThrottle::RebuildThrottle(int64_t bytes_per_second)
    : rate_(static_cast<double>(std::max<int64_t>(bytes_per_second, 0))), tokens_(rate_) {}

absl::Time RebuildThrottle::Spend(int64_t bytes, absl::Time now) {
  if (rate_ <= 0) return now;
  if (last_ != absl::InfinitePast() && now > last_) {
    tokens_ = std::min(rate_, tokens_ + rate_ * absl::ToDoubleSeconds(now - last_));
  }
  last_ = std::max(last_, now);
  tokens_ -= static_cast<double>(bytes);
  if (tokens_ >= 0) return now;
  return now + absl::Seconds(-tokens_ / rate_);
}

}  // namespace dictlog::cluster
