#include "server/daemon/open_files.h"

#include <sys/resource.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace dictlog::service {

absl::StatusOr<uint64_t> RaiseOpenFilesLimit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) {
    return absl::InternalError(
        absl::StrCat("reading the open-files limit: ", std::strerror(errno)));
  }
  if (limit.rlim_cur != limit.rlim_max) {
    rlimit raised = limit;
    raised.rlim_cur = limit.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &raised) == 0) limit = raised;
  }
  return limit.rlim_cur == RLIM_INFINITY ? std::numeric_limits<uint64_t>::max()
                                         : static_cast<uint64_t>(limit.rlim_cur);
}

int TableFilesFor(uint64_t limit) {
  constexpr int kLeast = 32;
  const uint64_t half = limit / 2;
  if (half > static_cast<uint64_t>(std::numeric_limits<int>::max())) return -1;
  return std::max(kLeast, static_cast<int>(half));
}

}  // namespace dictlog::service
