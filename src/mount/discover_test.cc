#include "mount/discover.h"

#include <gtest/gtest.h>

namespace archil {
namespace {

TEST(ResolveAdvertisedMount, KeepsAConcreteHostAndReplacesAWildcardByTheApisHost) {
  EXPECT_EQ(*ResolveAdvertisedMount("10.0.0.7:8421", "api.example"), "10.0.0.7:8421");
  EXPECT_EQ(*ResolveAdvertisedMount("[fd00::7]:8421", "api.example"), "[fd00::7]:8421");
  EXPECT_EQ(*ResolveAdvertisedMount("0.0.0.0:8421", "api.example"), "api.example:8421");
  EXPECT_EQ(*ResolveAdvertisedMount("[::]:8421", "api.example"), "api.example:8421");
  EXPECT_EQ(*ResolveAdvertisedMount("0.0.0.0:8421", "fd00::9"), "[fd00::9]:8421");
  EXPECT_EQ(*ResolveAdvertisedMount(":8421", "10.1.2.3"), "10.1.2.3:8421");
}

TEST(ResolveAdvertisedMount, RefusesWhatIsNotHostAndPort) {
  for (const char* bad : {"", "host", "host:", "host:0", "host:65536", "host:12x", "host:-1"}) {
    Result<std::string> r = ResolveAdvertisedMount(bad, "api.example");
    EXPECT_EQ(r.status().code(), Status::Code::kCorruption) << bad;
  }
}

}  // namespace
}  // namespace archil
