#include "proto/connection_rules.h"

#include <gtest/gtest.h>

#include "proto/messages.h"

namespace archil::proto {
namespace {

FrameHeader Req(uint16_t type, uint64_t id) {
  FrameHeader h;
  h.type = type;
  h.request_id = id;
  return h;
}

// A connection past HELLO and authentication.
ConnectionRules Bound(uint32_t max_in_flight = 256) {
  ConnectionRules c(max_in_flight);
  EXPECT_FALSE(c.Admit(Req(kTypeHello, 1000)));
  c.Authenticated();
  c.Answered(1000);
  return c;
}

TEST(ConnectionRules, HelloFirstAndOnce) {
  ConnectionRules c;
  auto r = c.Admit(Req(kTypePing, 1));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, WireStatus::kProtocolState);
  EXPECT_TRUE(r->close);

  ConnectionRules d;
  EXPECT_FALSE(d.Admit(Req(kTypeHello, 1)));
  r = d.Admit(Req(kTypeHello, 2));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, WireStatus::kProtocolState);
}

TEST(ConnectionRules, OnlyPreAuthTypesBeforeTheSessionIsBound) {
  ConnectionRules c;
  ASSERT_FALSE(c.Admit(Req(kTypeHello, 1)));
  for (uint16_t t : {kTypePing, kTypeSessionCreate, kTypeSessionBind, kTypeGoodbye}) {
    EXPECT_FALSE(c.Admit(Req(t, 10 + t))) << t;
  }
  for (uint16_t t : {kTypeLookup, kTypeWrite, kTypeRead, uint16_t{0x0999}}) {
    auto r = c.Admit(Req(t, 100 + t));
    ASSERT_TRUE(r) << t;
    EXPECT_EQ(r->status, WireStatus::kProtocolState) << t;
    EXPECT_TRUE(r->close);
  }
  c.Authenticated();
  EXPECT_FALSE(c.Admit(Req(kTypeLookup, 500)));
  EXPECT_FALSE(c.Admit(Req(0x0999, 501))) << "an unknown type is row 9's to answer, not row 8's";
}

TEST(ConnectionRules, ARequestIdIsUsedOnceUntilAnswered) {
  ConnectionRules c = Bound();
  ASSERT_FALSE(c.Admit(Req(kTypeLookup, 7)));
  auto r = c.Admit(Req(kTypeGetAttr, 7));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, WireStatus::kBadFrame);
  EXPECT_TRUE(r->close);
  c.Answered(7);
  EXPECT_FALSE(c.Admit(Req(kTypeGetAttr, 7)));
}

TEST(ConnectionRules, TooManyInFlightIsADelayAndTheConnectionStays) {
  ConnectionRules c = Bound(3);
  for (uint64_t id : {1, 2, 3}) ASSERT_FALSE(c.Admit(Req(kTypeLookup, id)));
  auto r = c.Admit(Req(kTypeLookup, 4));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, WireStatus::kDelay);
  EXPECT_FALSE(r->close);
  c.Answered(1);
  EXPECT_FALSE(c.Admit(Req(kTypeLookup, 4)));
  EXPECT_EQ(c.in_flight(), 3u);
}

}  // namespace
}  // namespace archil::proto
