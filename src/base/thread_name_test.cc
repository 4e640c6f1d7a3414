#include "base/thread_name.h"

#include <gtest/gtest.h>

#include <thread>

namespace archil {
namespace {

TEST(ThreadNameTest, AThreadCarriesTheNameItGaveItself) {
  std::string seen;
  std::thread t([&] {
    NameThisThread("disk-pool-3");
    seen = ThisThreadName();
  });
  t.join();
  EXPECT_EQ(seen, "disk-pool-3");
}

TEST(ThreadNameTest, ANameLongerThanTheKernelKeepsIsCutNotRefused) {
  std::string seen;
  std::thread t([&] {
    NameThisThread("a name far longer than fifteen bytes");
    seen = ThisThreadName();
  });
  t.join();
  EXPECT_EQ(seen, "a name far long");
}

}  // namespace
}  // namespace archil
