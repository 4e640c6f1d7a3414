#include "client/ino_pool.h"

#include <gtest/gtest.h>

#include <set>
#include <thread>
#include <vector>

namespace archil::client {
namespace {

// A server's grants: consecutive ranges, or a failure while `fail` is set; it keeps the last two
// ranges it granted, as the server does (protocol.md §5.3.3).
struct FakeServer {
  uint64_t next = 100;
  bool fail = false;
  int grants = 0;
  std::deque<InoPool::Range> kept;
  Result<InoPool::Range> Grant(uint32_t count) {
    if (fail) return Status::Unavailable("no server");
    ++grants;
    InoPool::Range r{next, count};
    next += count;
    kept.push_back(r);
    if (kept.size() > 2) kept.pop_front();
    return r;
  }
  bool Accepts(uint64_t ino) const {
    for (const InoPool::Range& r : kept) {
      if (ino >= r.first && ino < r.first + r.count) return true;
    }
    return false;
  }
};

// Every number is handed out once, in order, and is one the server still accepts when handed
// out; the next range is asked for when half of the one in use is used, not before.
TEST(InoPool, HandsOutEachNumberOnceWhileTheServerAcceptsIt) {
  FakeServer server;
  InoPool pool([&](uint32_t n) { return server.Grant(n); }, 8);
  EXPECT_EQ(server.grants, 0) << "nothing asked before the first create";
  uint64_t last = 0;
  for (int i = 0; i < 100; ++i) {
    std::optional<posix::Ino> ino = pool.Take();
    ASSERT_TRUE(ino);
    EXPECT_GT(ino->value(), last);
    last = ino->value();
    EXPECT_TRUE(server.Accepts(ino->value())) << i;
    if (i == 0) {
      EXPECT_EQ(server.grants, 1);
    } else if (i == 4) {
      EXPECT_EQ(server.grants, 2) << "half of the first range used";
    }
  }
  EXPECT_EQ(pool.granted(), 8u * static_cast<uint64_t>(server.grants));
}

// Without a grant there is no number (the create goes to the server); the pool asks again at
// the next Take.
TEST(InoPool, NoGrantMeansNoNumberUntilTheServerGrantsOne) {
  FakeServer server;
  server.fail = true;
  InoPool pool([&](uint32_t n) { return server.Grant(n); }, 4);
  EXPECT_FALSE(pool.Take());
  server.fail = false;
  EXPECT_EQ(pool.Take()->value(), 100u);
  pool.Reset();
  EXPECT_EQ(pool.Take()->value(), 104u) << "a new range after a reset";
  InoPool bad([](uint32_t) { return Result<InoPool::Range>(InoPool::Range{0, 4}); }, 4);
  EXPECT_FALSE(bad.Take()) << "a range that starts at 0 is not a grant";
}

TEST(InoPool, ConcurrentTakesNeverShareANumber) {
  FakeServer server;
  InoPool pool([&](uint32_t n) { return server.Grant(n); }, 16);
  std::vector<std::vector<uint64_t>> got(4);
  std::vector<std::thread> threads;
  for (auto& mine : got) {
    threads.emplace_back([&pool, &mine] {
      for (int i = 0; i < 500; ++i) mine.push_back(pool.Take()->value());
    });
  }
  for (std::thread& t : threads) t.join();
  std::set<uint64_t> all;
  for (const auto& mine : got) all.insert(mine.begin(), mine.end());
  EXPECT_EQ(all.size(), 2000u);
}

}  // namespace
}  // namespace archil::client
