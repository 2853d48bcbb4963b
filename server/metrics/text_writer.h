// TextWriter: builds a Prometheus text exposition (format 0.0.4): one HELP and TYPE
// line per metric family, then its samples with escaped label values.
//
// Thread safety: a TextWriter is a value used by one thread at a time.
#ifndef DICTLOG_SERVER_METRICS_TEXT_WRITER_H_
#define DICTLOG_SERVER_METRICS_TEXT_WRITER_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"

namespace dictlog::metrics {

// Label name/value pairs of one sample, in order.
using Labels = std::vector<std::pair<std::string, std::string>>;

class TextWriter {
 public:
  // Starts a family; `type` is "counter", "gauge" or "histogram". Every family name
  // must be written once.
  void Family(absl::string_view name, absl::string_view type, absl::string_view help);
  // One sample line: `name{labels} value`.
  void Sample(absl::string_view name, const Labels& labels, double value);

  const std::string& text() const { return text_; }

 private:
  std::string text_;
};

// A label value with backslash, double quote and newline escaped.
std::string EscapeLabelValue(absl::string_view value);
// A sample value: integers exactly, others with full precision, +Inf/-Inf/NaN.
std::string FormatValue(double value);

}  // namespace dictlog::metrics

#endif  // DICTLOG_SERVER_METRICS_TEXT_WRITER_H_
