#include "common/thread_name.h"

#include <pthread.h>

#include <string>

namespace dictlog {

void NameThisThread(absl::string_view name) {
#if defined(__linux__)
  pthread_setname_np(pthread_self(), std::string(name.substr(0, kMaxThreadNameBytes)).c_str());
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
