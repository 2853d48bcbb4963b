// RebuildThrottle: the rate at which a node builds partitions newly held (docs/cluster.md
// "Throttled rebuilds"), as a token bucket over the bytes of the messages it applies for
// them (one second's worth of burst). The materializer pauses fetching the partitions it
// builds until the bucket refills, so the partitions it serves keep their latency.
//
// Pure: the caller passes the time (tests pass theirs).
//
// Thread safety: none; one thread (the materializer's) owns it.
#ifndef DICTLOG_SERVER_CLUSTER_REBUILD_THROTTLE_H_
#define DICTLOG_SERVER_CLUSTER_REBUILD_THROTTLE_H_

#include <cstdint>

#include "absl/time/time.h"

namespace dictlog::cluster {

class RebuildThrottle {
 public:
  // `bytes_per_second` 0: unlimited.
  explicit RebuildThrottle(int64_t bytes_per_second);

  // `bytes` of a building partition were applied at `now`: the time until which
  // building pauses (at or before `now`: no pause).
  absl::Time Spend(int64_t bytes, absl::Time now);

 private:
  const double rate_;  // Bytes per second; 0: unlimited.
  double tokens_;      // May go negative: a debt paid by pausing.
  absl::Time last_ = absl::InfinitePast();
};

}  // namespace dictlog::cluster

#endif  // DICTLOG_SERVER_CLUSTER_REBUILD_THROTTLE_H_
