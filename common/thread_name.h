// Naming the calling thread, so that `top -H`, `ps -L`, perf and /proc/PID/task/*/comm
// tell dictlogd's background threads apart (training, re-encoding, batch encoding,
// retention, ...) instead of showing every one as "dictlogd". Stateless; each thread
// names only itself.
#ifndef DICTLOG_COMMON_THREAD_NAME_H_
#define DICTLOG_COMMON_THREAD_NAME_H_

#include <string>

#include "absl/strings/string_view.h"

namespace dictlog {

// Linux keeps at most this many bytes of a thread's name.
inline constexpr size_t kMaxThreadNameBytes = 15;

// Names the calling thread `name`, cut to kMaxThreadNameBytes. Best effort: a name
// is a diagnostic, so a failure (another OS) is ignored.
void NameThisThread(absl::string_view name);

// The calling thread's name ("" where the OS cannot say).
std::string ThisThreadName();

}  // namespace dictlog

#endif  // DICTLOG_COMMON_THREAD_NAME_H_
