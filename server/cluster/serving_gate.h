// ServingGate: whether a built partition keeps serving reads on this node, given how
// far it lags behind the partition's end (docs/cluster.md "Lag"). A partition whose lag
// (end offset - next offset to apply, in messages) stays above `max_lag_messages` for
// `grace` stops serving: the node announces `serving: false` for it, so clients and
// forwarding nodes read from its other replica. It serves again once its lag is at most
// half the bound (hysteresis: a lag hovering at the bound does not flap).
//
// Pure: the caller passes the time (tests pass theirs). One gate per partition.
//
// Thread safety: none; one thread (the materializer's) owns it.
#ifndef DICTLOG_SERVER_CLUSTER_SERVING_GATE_H_
#define DICTLOG_SERVER_CLUSTER_SERVING_GATE_H_

#include <cstdint>

#include "absl/time/time.h"

namespace dictlog::cluster {

struct ServingGateOptions {
  // Lag in messages above which a partition stops serving (after `grace`); 0: lag is
  // never checked. Default 10000.
  int64_t max_lag_messages = 10000;
  // How long the lag must stay above the bound before serving stops. Default 5 s.
  absl::Duration grace = absl::Seconds(5);
};

// What Update decided.
enum class GateChange { kNone, kStopped, kResumed };

class ServingGate {
 public:
  explicit ServingGate(ServingGateOptions options) : options_(options) {}

  // The partition lags `lag` messages at `now` (negative: unknown, nothing changes).
  GateChange Update(int64_t lag, absl::Time now);
  // Whether the partition serves as far as its lag goes. Starts true.
  bool serving() const { return serving_; }

 private:
  ServingGateOptions options_;
  bool serving_ = true;
  absl::Time above_since_ = absl::InfiniteFuture();  // When the lag went above the bound.
};

}  // namespace dictlog::cluster

#endif  // DICTLOG_SERVER_CLUSTER_SERVING_GATE_H_
