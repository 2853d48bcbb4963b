// ProgressLine: the progress indicator of a command-line tool, one line on stderr.
// Live (a terminal), every Show rewrites the line in place with '\r'. Otherwise (a
// pipe or log file) it prints one line per stage: the last text shown for a stage,
// printed when the next stage starts or at Finish, so a log holds how far each stage
// got. Not thread-safe: one thread drives it.
#ifndef DICTLOG_DICT_TRAINER_PROGRESS_LINE_H_
#define DICTLOG_DICT_TRAINER_PROGRESS_LINE_H_

#include <ostream>
#include <string>

#include "absl/strings/string_view.h"

namespace dictlog::trainer {

class ProgressLine {
 public:
  // `out` is borrowed and must outlive the ProgressLine.
  ProgressLine(std::ostream& out, bool live) : out_(out), live_(live) {}

  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  // Shows `text` (one line, no '\n') as the progress of `stage`.
  void Show(absl::string_view stage, absl::string_view text);

  // Ends the progress line so that other output can follow; the next Show starts a
  // new one.
  void Finish();

 private:
  std::ostream& out_;
  const bool live_;
  std::string stage_;    // The stage last shown; empty after Finish.
  std::string pending_;  // Not live: the text to print when the stage ends.
  size_t shown_width_ = 0;  // Live: characters on the current line.
};

}  // namespace dictlog::trainer

#endif  // DICTLOG_DICT_TRAINER_PROGRESS_LINE_H_
