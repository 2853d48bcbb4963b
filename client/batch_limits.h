// BatchLimits: the rule that groups records into AppendBatch calls. A batch holds at
// most `max_records` records and, unless one record alone is larger, at most
// `max_bytes` payload bytes; records keep their order. The dictlog CLI batches the
// lines of a stream with it (cli::LineBatcher) and dictlog-bench load the lines of a
// file in memory (SplitIntoBatches).
//
// Thread safety: a value; one thread fills one.
#ifndef DICTLOG_CLIENT_BATCH_LIMITS_H_
#define DICTLOG_CLIENT_BATCH_LIMITS_H_

#include <cstddef>
#include <utility>
#include <vector>

namespace dictlog::client {

class BatchLimits {
 public:
  BatchLimits(size_t max_records, size_t max_bytes)
      : max_records_(max_records), max_bytes_(max_bytes) {}

  // Whether the open batch holds max_records records (read no more for it).
  bool Full() const { return records_ >= max_records_; }
  // Whether a record of `bytes` payload bytes may join the open batch: it is not
  // full and either empty or still within max_bytes with the record.
  bool Fits(size_t bytes) const {
    return !Full() && (records_ == 0 || bytes_ + bytes <= max_bytes_);
  }
  // Counts a record of `bytes` payload bytes into the open batch.
  void Add(size_t bytes) {
    ++records_;
    bytes_ += bytes;
  }
  // Opens a new, empty batch.
  void Clear() { records_ = bytes_ = 0; }

 private:
  size_t max_records_;
  size_t max_bytes_;
  size_t records_ = 0;
  size_t bytes_ = 0;
};

// The batches of records whose payload sizes are `sizes`, in order, as [begin, end)
// index ranges filled by `limits`' rule (whose open batch must be empty).
std::vector<std::pair<size_t, size_t>> SplitIntoBatches(const std::vector<size_t>& sizes,
                                                        BatchLimits limits);

}  // namespace dictlog::client

#endif  // DICTLOG_CLIENT_BATCH_LIMITS_H_
