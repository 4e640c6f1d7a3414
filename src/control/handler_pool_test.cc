// HandlerPool: the last thread to go idle takes the next task, the queue is bounded, and the
// destructor runs what was queued.
#include "control/handler_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <set>
#include <thread>

namespace archil {
namespace {

// Waits (at most 10 s) until every one of the pool's `threads` is idle.
void AwaitAllIdle(const HandlerPool& pool, size_t threads) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (pool.idle() != threads && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  ASSERT_EQ(pool.idle(), threads);
}

// Tasks submitted one after another (each waited for, and its thread back on the idle stack) all
// run on one thread: the one that went idle last. With FIFO wake-ups they would cycle through all
// eight.
TEST(HandlerPoolTest, SequentialTasksStayOnTheLastIdleThread) {
  HandlerPool pool(8, 100);
  AwaitAllIdle(pool, 8);
  std::set<std::thread::id> ran_on;
  for (int i = 0; i < 50; ++i) {
    std::promise<std::thread::id> done;
    ASSERT_TRUE(pool.Submit([&done] { done.set_value(std::this_thread::get_id()); }));
    ran_on.insert(done.get_future().get());
    // The task's thread goes back on the idle stack right after set_value (a sleep of 1 ms was not
    // always enough under ASan on a busy machine).
    AwaitAllIdle(pool, 8);
  }
  EXPECT_EQ(ran_on.size(), 1u);
}

// Tasks that overlap run on different threads, all at once.
TEST(HandlerPoolTest, ConcurrentTasksRunInParallel) {
  HandlerPool pool(4, 100);
  std::atomic<int> running{0};
  std::atomic<int> peak{0};
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<int> finished{0};
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(pool.Submit([&, released] {
      peak = std::max(peak.load(), ++running);
      released.wait();
      --running;
      ++finished;
    }));
  }
  for (int i = 0; i < 200 && peak.load() < 4; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_EQ(peak.load(), 4);
  release.set_value();
  for (int i = 0; i < 200 && finished.load() < 4; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_EQ(finished.load(), 4);
}

// With every thread busy, at most max_queued tasks wait; the destructor runs them.
TEST(HandlerPoolTest, QueueIsBoundedAndDrainedOnDestruction) {
  std::atomic<int> ran{0};
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  {
    HandlerPool pool(1, 2);
    std::promise<void> started;
    ASSERT_TRUE(pool.Submit([&started, released] {
      started.set_value();
      released.wait();
    }));
    started.get_future().wait();
    EXPECT_TRUE(pool.Submit([&ran] { ++ran; }));
    EXPECT_TRUE(pool.Submit([&ran] { ++ran; }));
    EXPECT_FALSE(pool.Submit([&ran] { ran += 100; })) << "a third waiting task is refused";
    release.set_value();
  }
  EXPECT_EQ(ran.load(), 2);
}

}  // namespace
}  // namespace archil
