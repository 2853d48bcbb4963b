// LineBatcher: splits an input stream into records, one per line ('\n' ends a line
// and is not part of the record; so is one '\r' before it, the end of a CRLF line,
// unless the batcher keeps bytes exactly; every other byte is kept), and groups them
// into batches by client::BatchLimits' rule (record count and bytes). Not thread-safe;
// one reader per stream.
#ifndef DICTLOG_CLIENT_CLI_LINE_BATCHER_H_
#define DICTLOG_CLIENT_CLI_LINE_BATCHER_H_

#include <istream>
#include <string>
#include <vector>

namespace dictlog::cli {

class LineBatcher {
 public:
  // `in` is borrowed for the batcher's lifetime. A batch holds at most
  // `max_records` lines and, unless one line alone is larger, at most `max_bytes`
  // (client::BatchLimits); a full batch is returned without reading further.
  // With `keep_cr`, a line's trailing '\r' stays part of its record.
  LineBatcher(std::istream& in, size_t max_records, size_t max_bytes, bool keep_cr = false)
      : in_(in), max_records_(max_records), max_bytes_(max_bytes), keep_cr_(keep_cr) {}

  // Fills *batch with the next lines; false (and an empty batch) at end of input.
  bool Next(std::vector<std::string>* batch);

 private:
  std::istream& in_;
  const size_t max_records_;
  const size_t max_bytes_;
  const bool keep_cr_;
  std::string pending_;
  bool has_pending_ = false;
};

}  // namespace dictlog::cli

#endif  // DICTLOG_CLIENT_CLI_LINE_BATCHER_H_
