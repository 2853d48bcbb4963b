#include "server/store/request_expiry.h"

#include "absl/time/clock.h"

namespace dictlog::store {

bool RequestExpired(const storage::AppendedRequest& entry, absl::Duration window,
                    absl::Time now) {
  return absl::FromUnixMillis(entry.created_unix_ms()) + window < now;
}

bool RequestExpiry::Filter(int /*level*/, const rocksdb::Slice& /*key*/,
                           const rocksdb::Slice& value, std::string* /*new_value*/,
                           bool* /*value_changed*/) const {
  storage::AppendedRequest entry;
  if (!entry.ParseFromArray(value.data(), static_cast<int>(value.size()))) return true;
  return RequestExpired(entry, window_, clock_ ? clock_() : absl::Now());
}

}  // namespace dictlog::store
