#include "base/address_key.h"

#include <gtest/gtest.h>

namespace archil {
namespace {

TEST(AddressKey, CountsIpv4HostsAndIpv6Slash64s) {
  EXPECT_EQ(AddressKey("10.0.0.7"), "10.0.0.7");
  EXPECT_EQ(AddressKey("::ffff:10.0.0.7"), "10.0.0.7");
  EXPECT_EQ(AddressKey("2001:db8:1:2:aaaa:bbbb:cccc:dddd"), "2001:db8:1:2::/64");
  EXPECT_EQ(AddressKey("2001:db8:1:2::1"), AddressKey("2001:db8:1:2:ffff::9"));
  EXPECT_NE(AddressKey("2001:db8:1:2::1"), AddressKey("2001:db8:1:3::1"));
  EXPECT_EQ(AddressKey("fe80::1%eth0"), "fe80::/64");
  EXPECT_EQ(AddressKey("::1"), "::/64");
  EXPECT_EQ(AddressKey("not an address"), "not an address");
}

}  // namespace
}  // namespace archil
