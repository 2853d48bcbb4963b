#include "client/cli/line_batcher.h"

namespace dictlog::cli {

bool LineBatcher::Next(std::vector<std::string>* batch) {
  batch->clear();
  size_t bytes = 0;
  while (batch->size() < max_records_) {
    if (!has_pending_) {
      if (!std::getline(in_, pending_)) break;
      if (!keep_cr_ && !pending_.empty() && pending_.back() == '\r') pending_.pop_back();
      has_pending_ = true;
    }
    if (!batch->empty() && bytes + pending_.size() > max_bytes_) break;
    bytes += pending_.size();
    batch->push_back(std::move(pending_));
    has_pending_ = false;
  }
  return !batch->empty();
}

}  // namespace dictlog::cli
