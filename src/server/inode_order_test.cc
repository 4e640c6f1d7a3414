#include "server/inode_order.h"

#include <gtest/gtest.h>

#include <string>

namespace archil::server {
namespace {

TEST(InodeOrder, MutationsOfOneInodeRunInArrivalOrderOthersAtOnce) {
  InodeOrder order;
  std::string ran;
  auto job = [&](char c) { return [&ran, c] { ran.push_back(c); }; };
  auto arrive = [&](std::vector<uint64_t> keys, char c, bool* now) {
    auto t = InodeOrder::NewTicket(std::move(keys));
    *now = order.Arrive(t, job(c));
    return t;
  };
  bool now = false;
  auto a = arrive({1}, 'a', &now);
  EXPECT_TRUE(now);
  auto b = arrive({1, 2}, 'b', &now);  // waits for a
  EXPECT_FALSE(now);
  auto c = arrive({3}, 'c', &now);  // another inode: at once
  EXPECT_TRUE(now);
  auto d = arrive({2}, 'd', &now);  // waits for b (the last on inode 2)
  EXPECT_FALSE(now);
  InodeOrder::TakeRun(c)();
  EXPECT_TRUE(order.Finish(c).empty());
  InodeOrder::TakeRun(a)();
  auto after_a = order.Finish(a);
  ASSERT_EQ(after_a.size(), 1u);
  EXPECT_TRUE(order.Finish(a).empty()) << "a second Finish released b again";
  after_a[0]();  // b
  auto after_b = order.Finish(b);
  ASSERT_EQ(after_b.size(), 1u);
  after_b[0]();  // d
  EXPECT_TRUE(order.Finish(d).empty());
  EXPECT_EQ(ran, "cabd");
  auto e = arrive({1, 2, 3}, 'e', &now);  // everything finished: at once
  EXPECT_TRUE(now);
  EXPECT_TRUE(order.Finish(e).empty());
}

TEST(InodeOrder, KeysOfEachMutation) {
  v1::Rename r;
  r.set_parent(4);
  r.set_new_parent(9);
  EXPECT_EQ(MutationKeys(proto::kTypeRename, r), (std::vector<uint64_t>{4, 9}));
  v1::Write w;
  w.set_ino(7);
  EXPECT_EQ(MutationKeys(proto::kTypeWrite, w), (std::vector<uint64_t>{7}));
  v1::Lookup l;
  EXPECT_TRUE(MutationKeys(proto::kTypeLookup, l).empty());
}

}  // namespace
}  // namespace archil::server
