// The training report: the dictionary written, and a table of its held-out evaluation
// (baseline row, candidate row, gain), as text for a terminal (the offline trainer
// prints it on stdout). Stateless; safe to call from several threads.
#ifndef DICTLOG_TRAINING_REPORT_H_
#define DICTLOG_TRAINING_REPORT_H_

#include <string>

#include "training/trainer.h"

namespace dictlog::trainer {

struct ReportInfo {
  std::string dictionary_path;  // Where the dictionary was written.
  uint32_t dictionary_id = 0;
  std::string baseline_path;  // The baseline dictionary's file; empty: no dictionary.
};

// The report: '\n'-terminated lines; dict_trainer/README.md shows one.
//   dictionary  FILE  id N  SIZE bytes  trained on N records (N excluded) in S s
//   a header line, then columns records, raw_bytes, stored_bytes and ratio for
//   "no dictionary" (or "baseline <file>" when there is a baseline) and for
//   "candidate", which also has compress_MB/s and decompress_MB/s
//   gain: +117.3%
// Columns are aligned; the label column widens to fit a long baseline path.
std::string FormatReport(const TrainResult& result, const ReportInfo& info);

}  // namespace dictlog::trainer

#endif  // DICTLOG_TRAINING_REPORT_H_
