#include "dict_trainer/progress_line.h"

#include <algorithm>

namespace dictlog::trainer {

void ProgressLine::Show(absl::string_view stage, absl::string_view text) {
  if (live_) {
    out_ << '\r' << text;
    // Blank out what is left of a longer previous text.
    if (text.size() < shown_width_) out_ << std::string(shown_width_ - text.size(), ' ');
    out_ << std::flush;
    shown_width_ = std::max(shown_width_, text.size());
  } else {
    if (!stage_.empty() && stage != stage_) out_ << pending_ << '\n' << std::flush;
    pending_ = std::string(text);
  }
  stage_ = std::string(stage);
}

void ProgressLine::Finish() {
  if (stage_.empty()) return;
  if (live_) {
    out_ << '\n';
  } else {
    out_ << pending_ << '\n';
  }
  out_ << std::flush;
  stage_.clear();
  pending_.clear();
  shown_width_ = 0;
}

}  // namespace dictlog::trainer
