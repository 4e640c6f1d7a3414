#include "control/connection_limits.h"

#include <gtest/gtest.h>

#include <vector>

namespace archil {
namespace {

TEST(ConnectionLimits, TheOldestUnprovenConnectionMakesRoom) {
  ConnectionLimits limits(/*max_total=*/8, /*max_per_peer=*/100, /*max_unproven=*/3);
  std::vector<int> evicted;
  std::vector<std::unique_ptr<ConnectionLimits::Slot>> slots;
  for (int i = 0; i < 3; ++i) {
    slots.push_back(limits.Acquire("10.0.0.1"));
    ASSERT_TRUE(slots.back());
    slots.back()->OnEvict([&evicted, i] { evicted.push_back(i); });
  }
  slots[1]->Proven();  // it sent a request: never evicted
  slots.push_back(limits.Acquire("10.0.0.2"));
  ASSERT_TRUE(slots.back());
  EXPECT_EQ(limits.unproven(), 3u);  // 0 and 2, and the new one
  slots.push_back(limits.Acquire("10.0.0.3"));
  ASSERT_TRUE(slots.back());
  EXPECT_EQ(evicted, (std::vector<int>{0}));
  EXPECT_EQ(limits.evicted(), 1u);
  slots[0].reset();  // the evicted connection closes: its count goes
  EXPECT_EQ(limits.total(), 4u);
}

TEST(ConnectionLimits, AtTheTotalOnlyUnprovenConnectionsAreEvicted) {
  ConnectionLimits limits(/*max_total=*/2, /*max_per_peer=*/100, /*max_unproven=*/100);
  auto a = limits.Acquire("10.0.0.1");
  auto b = limits.Acquire("10.0.0.1");
  bool b_evicted = false;
  b->OnEvict([&] { b_evicted = true; });
  a->Proven();
  auto c = limits.Acquire("10.0.0.2");
  ASSERT_TRUE(c);
  EXPECT_TRUE(b_evicted);
  b.reset();
  c->Proven();
  EXPECT_FALSE(limits.Acquire("10.0.0.3")) << "every connection proven: the total holds";
}

TEST(ConnectionLimits, PerPeerCountsIpv6By64) {
  ConnectionLimits limits(/*max_total=*/100, /*max_per_peer=*/2);
  auto a = limits.Acquire("2001:db8::1");
  auto b = limits.Acquire("2001:db8::2");
  ASSERT_TRUE(a && b);
  EXPECT_FALSE(limits.Acquire("2001:db8::3")) << "the same /64";
  EXPECT_TRUE(limits.Acquire("2001:db8:0:1::3"));
}

}  // namespace
}  // namespace archil
