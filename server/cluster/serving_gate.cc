#include "server/cluster/serving_gate.h"

namespace dictlog::cluster {

GateChange ServingGate::Update(int64_t lag, absl::Time now) {
  if (options_.max_lag_messages <= 0 || lag < 0) return GateChange::kNone;
  if (!serving_) {
    if (lag > options_.max_lag_messages / 2) return GateChange::kNone;
    serving_ = true;
    above_since_ = absl::InfiniteFuture();
    return GateChange::kResumed;
  }
  if (lag <= options_.max_lag_messages) {
    above_since_ = absl::InfiniteFuture();
    return GateChange::kNone;
  }
  if (above_since_ == absl::InfiniteFuture()) above_since_ = now;
  if (now - above_since_ < options_.grace) return GateChange::kNone;
  serving_ = false;
  return GateChange::kStopped;
}

}  // namespace dictlog::cluster
