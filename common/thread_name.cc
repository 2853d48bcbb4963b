#include "common/thread_name.h"

#include <pthread.h>

#include <algorithm>

namespace dictlog {

void NameThisThread(absl::string_view name) {
  std::string cut(name.substr(0, std::min(name.size(), kMaxThreadNameBytes)));
#if defined(__linux__)
  pthread_setname_np(pthread_self(), cut.c_str());
#endif
}

std::string ThisThreadName() {
#if defined(__linux__)
  char name[kMaxThreadNameBytes + 1] = {};
  if (pthread_getname_np(pthread_self(), name, sizeof(name)) == 0) return name;
#endif
  return "";
}

}  // namespace dictlog
