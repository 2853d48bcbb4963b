#include "client/cli/line_batcher.h"

#include "client/batch_limits.h"

namespace dictlog::cli {

bool LineBatcher::Next(std::vector<std::string>* batch) {
  batch->clear();
  client::BatchLimits limits(max_records_, max_bytes_);
  while (!limits.Full()) {  // A full batch goes out without waiting for another line.
    if (!has_pending_) {
      if (!std::getline(in_, pending_)) break;
      if (!keep_cr_ && !pending_.empty() && pending_.back() == '\r') pending_.pop_back();
      has_pending_ = true;
    }
    if (!limits.Fits(pending_.size())) break;
    limits.Add(pending_.size());
    batch->push_back(std::move(pending_));
    has_pending_ = false;
  }
  return !batch->empty();
}

}  // namespace dictlog::cli
