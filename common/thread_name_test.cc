#include "common/thread_name.h"

#include <string>
#include <thread>

#include "gtest/gtest.h"

namespace dictlog {
namespace {

std::string NameInNewThread(const std::string& name) {
  std::string seen;
  std::thread thread([&] {
    NameThisThread(name);
    seen = ThisThreadName();
  });
  thread.join();
  return seen;
}

TEST(ThreadNameTest, NamesTheCallingThreadOnly) {
  const std::string before = ThisThreadName();
  EXPECT_EQ(NameInNewThread("dl-train"), "dl-train");
  EXPECT_EQ(ThisThreadName(), before);
}

TEST(ThreadNameTest, LongNamesAreCutToWhatLinuxKeeps) {
  EXPECT_EQ(NameInNewThread("dl-a-very-long-thread-name"), "dl-a-very-long-");
  EXPECT_EQ(NameInNewThread("dl-a-very-long-thread-name").size(), kMaxThreadNameBytes);
}

}  // namespace
}  // namespace dictlog
