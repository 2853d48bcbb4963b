#include "training/report.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace dictlog::trainer {
namespace {

// Labels are left-aligned in a column at least this wide.
constexpr int kMinLabelWidth = 20;

std::string DictionaryLine(const TrainResult& result, const ReportInfo& info) {
  return absl::StrFormat(
      "dictionary  %s  id %u  %u bytes  trained on %u records (%u excluded) in %.2f s\n",
      info.dictionary_path, info.dictionary_id, result.dictionary.size(),
      result.samples_used, result.samples_excluded, result.train_seconds);
}

// One table row without the speed columns (and without '\n').
std::string SizeRow(int width, absl::string_view label, const Evaluation& evaluation,
                    uint64_t stored_bytes, double ratio) {
  return absl::StrFormat("%-*s%8u  %9u  %12u %6.3f", width, label, evaluation.records,
                         evaluation.raw_bytes, stored_bytes, ratio);
}

}  // namespace

std::string FormatReport(const TrainResult& result, const ReportInfo& info) {
  const Evaluation& evaluation = result.evaluation;
  const std::string baseline_label = info.baseline_path.empty()
                                         ? std::string("no dictionary")
                                         : absl::StrCat("baseline ", info.baseline_path);
  const int width =
      std::max(kMinLabelWidth, static_cast<int>(baseline_label.size()) + 1);
  std::string report = DictionaryLine(result, info);
  absl::StrAppendFormat(&report, "%*s  raw_bytes  stored_bytes  ratio   compress_MB/s  "
                        "decompress_MB/s\n", width + 8, "records");
  absl::StrAppend(&report,
                  SizeRow(width, baseline_label, evaluation, evaluation.baseline_bytes,
                          evaluation.baseline_ratio),
                  "\n");
  absl::StrAppend(&report,
                  SizeRow(width, "candidate", evaluation, evaluation.candidate_bytes,
                          evaluation.candidate_ratio),
                  absl::StrFormat("  %14.1f  %15.1f\n", evaluation.compress_mb_per_s,
                                  evaluation.decompress_mb_per_s));
  absl::StrAppendFormat(&report, "gain: %+.1f%%\n", evaluation.gain * 100);
  return report;
}

}  // namespace dictlog::trainer
