#include "base/ip_range.h"

#include <gtest/gtest.h>

namespace archil {
namespace {

std::string Canonical(std::string_view text) {
  Result<IpRange> r = ParseIpRange(text);
  return r.ok() ? r->ToString() : "error: " + r.status().message();
}

TEST(IpRangeTest, CanonicalForms) {
  EXPECT_EQ(Canonical("10.0.0.0/8"), "10.0.0.0/8");
  EXPECT_EQ(Canonical("10.1.2.3"), "10.1.2.3/32");
  EXPECT_EQ(Canonical("0.0.0.0/0"), "0.0.0.0/0");
  EXPECT_EQ(Canonical("2001:db8::/32"), "2001:db8::/32");
  EXPECT_EQ(Canonical("2001:0DB8:0000::1"), "2001:db8::1/128");
  EXPECT_EQ(Canonical("::/0"), "::/0");
  EXPECT_EQ(Canonical("::1"), "::1/128");
  // An IPv4-mapped range is the IPv4 one.
  EXPECT_EQ(Canonical("::ffff:10.1.2.3"), "10.1.2.3/32");
  EXPECT_EQ(Canonical("::ffff:10.0.0.0/104"), "10.0.0.0/8");
  EXPECT_EQ(Canonical("10.200.1.0/24"), "10.200.1.0/24");
}

TEST(IpRangeTest, RefusesBadInput) {
  const std::string_view bads[] = {"",
                                   "1.2.3.4/33",
                                   "::/129",
                                   "1.2.3",
                                   " 1.2.3.4",
                                   "1.2.3.4 ",
                                   "1.2.3.4/",
                                   "01.2.3.4",
                                   "1.2.3.4/08",
                                   "1.2.3.4/-1",
                                   "1.2.3.4/+8",
                                   "1.2.3.4/8/8",
                                   "1.2.3.4/1000",
                                   "256.1.1.1",
                                   "fe80::1%eth0",
                                   "host.example",
                                   "1.2.3.4/ 8",
                                   "/8",
                                   ":::",
                                   "1::2::3",
                                   "1.2.3.4\n",
                                   std::string_view("1.2.3.4\0", 8)};
  for (std::string_view bad : bads) {
    Result<IpRange> r = ParseIpRange(bad);
    ASSERT_FALSE(r.ok()) << "'" << bad << "' -> " << r->ToString();
    EXPECT_EQ(r.status().code(), Status::Code::kInvalidArgument);
  }
  const std::string long_text(100000, '1');
  Result<IpRange> r = ParseIpRange(long_text);
  ASSERT_FALSE(r.ok());
  EXPECT_LT(r.status().message().size(), 200u);  // the message does not echo it whole
}

TEST(IpRangeTest, HostBitsBeyondThePrefixAreRefusedNamingTheRange) {
  Result<IpRange> r = ParseIpRange("10.1.2.3/8");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("10.0.0.0/8"), std::string::npos) << r.status().message();
  r = ParseIpRange("2001:db8::1/32");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("2001:db8::/32"), std::string::npos);
  EXPECT_TRUE(ParseIpRange("10.0.0.128/25").ok());
  EXPECT_FALSE(ParseIpRange("10.0.0.64/25").ok());
}

TEST(IpRangeTest, Contains) {
  const IpRange net8 = *ParseIpRange("10.0.0.0/8");
  EXPECT_TRUE(IpRangeContains(net8, "10.200.1.2"));
  EXPECT_TRUE(IpRangeContains(net8, "::ffff:10.200.1.2"));  // a mapped peer is its IPv4 address
  EXPECT_FALSE(IpRangeContains(net8, "11.0.0.1"));
  EXPECT_FALSE(IpRangeContains(net8, "::a00:1"));  // not mapped: an IPv6 address
  EXPECT_FALSE(IpRangeContains(net8, "not an address"));
  EXPECT_FALSE(IpRangeContains(net8, ""));

  const IpRange one = *ParseIpRange("10.200.1.2");
  EXPECT_TRUE(IpRangeContains(one, "10.200.1.2"));
  EXPECT_FALSE(IpRangeContains(one, "10.200.1.3"));

  const IpRange odd = *ParseIpRange("10.0.0.128/25");
  EXPECT_TRUE(IpRangeContains(odd, "10.0.0.200"));
  EXPECT_FALSE(IpRangeContains(odd, "10.0.0.127"));

  const IpRange v6 = *ParseIpRange("2001:db8::/32");
  EXPECT_TRUE(IpRangeContains(v6, "2001:db8:ffff::1"));
  EXPECT_TRUE(IpRangeContains(v6, "2001:db8::1%eth0"));  // a zone is ignored
  EXPECT_FALSE(IpRangeContains(v6, "2001:db9::1"));
  EXPECT_FALSE(IpRangeContains(v6, "10.0.0.1"));

  const IpRange any4 = *ParseIpRange("0.0.0.0/0"), any6 = *ParseIpRange("::/0");
  EXPECT_TRUE(IpRangeContains(any4, "1.2.3.4"));
  EXPECT_TRUE(IpRangeContains(any4, "::ffff:1.2.3.4"));
  EXPECT_FALSE(IpRangeContains(any4, "::1"));
  EXPECT_TRUE(IpRangeContains(any6, "::1"));
  EXPECT_FALSE(IpRangeContains(any6, "1.2.3.4"));

  const IpRange v6_61 = *ParseIpRange("2001:db8:0:8::/61");
  EXPECT_TRUE(IpRangeContains(v6_61, "2001:db8:0:f::1"));
  EXPECT_FALSE(IpRangeContains(v6_61, "2001:db8:0:7::1"));
}

TEST(IpRangeTest, AnEmptyListAllowsEveryone) {
  EXPECT_TRUE(IpAllowed({}, "1.2.3.4"));
  EXPECT_TRUE(IpAllowed({}, "garbage"));
  const std::vector<IpRange> list = {*ParseIpRange("10.0.0.0/8"), *ParseIpRange("::1")};
  EXPECT_TRUE(IpAllowed(list, "10.0.0.1"));
  EXPECT_TRUE(IpAllowed(list, "::1"));
  EXPECT_FALSE(IpAllowed(list, "127.0.0.1"));
  EXPECT_FALSE(IpAllowed(list, "garbage"));
}

}  // namespace
}  // namespace archil
