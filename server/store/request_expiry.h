// RequestExpiry: the requests column family's RocksDB compaction filter. It drops
// AppendedRequest entries older than the request window (and ones that do not parse),
// so the family holds about one window of request ids without a sweeper. Reads check
// the age themselves: an entry a compaction has not reached yet reads as absent too.
//
// Thread safety: stateless after construction; RocksDB calls it concurrently.
#ifndef DICTLOG_SERVER_STORE_REQUEST_EXPIRY_H_
#define DICTLOG_SERVER_STORE_REQUEST_EXPIRY_H_

#include <rocksdb/compaction_filter.h>

#include <functional>
#include <string>
#include <utility>

#include "absl/time/time.h"
#include "server/store/catalog.pb.h"

namespace dictlog::store {

// True if `entry`, read at `now`, is older than `window`.
bool RequestExpired(const storage::AppendedRequest& entry, absl::Duration window,
                    absl::Time now);

class RequestExpiry final : public rocksdb::CompactionFilter {
 public:
  // `clock` (null: absl::Now) tells the time; it is called from RocksDB's threads.
  RequestExpiry(absl::Duration window, std::function<absl::Time()> clock)
      : window_(window), clock_(std::move(clock)) {}

  bool Filter(int level, const rocksdb::Slice& key, const rocksdb::Slice& value,
              std::string* new_value, bool* value_changed) const override;
  const char* Name() const override { return "dictlog.RequestExpiry"; }

 private:
  const absl::Duration window_;
  const std::function<absl::Time()> clock_;
};

}  // namespace dictlog::store

#endif  // DICTLOG_SERVER_STORE_REQUEST_EXPIRY_H_
