// AfterReplyScope: deferred work waits for Run (or the scope's end), in order; without a scope it
// runs at once; work deferred while the queue runs runs too.
#include "control/after_reply.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "base/mutex.h"

namespace archil {
namespace {

TEST(AfterReplyTest, WithoutAScopeWorkRunsAtOnce) {
  std::string log;
  Defer([&] { log += "a"; });
  EXPECT_EQ(log, "a");
}

TEST(AfterReplyTest, InAScopeWorkWaitsForRunInOrder) {
  std::string log;
  {
    AfterReplyScope scope;
    Defer([&] { log += "a"; });
    Defer([&] { log += "b"; });
    log += "reply,";
    scope.Run();
    EXPECT_EQ(log, "reply,ab");
    Defer([&] { log += "c"; });  // after Run, the scope queues again
    EXPECT_EQ(log, "reply,ab");
  }
  EXPECT_EQ(log, "reply,abc");  // the rest at the scope's end
  Defer([&] { log += "d"; });   // the scope is gone: at once
  EXPECT_EQ(log, "reply,abcd");
}

TEST(AfterReplyTest, WorkDeferredByDeferredWorkRuns) {
  std::string log;
  {
    AfterReplyScope scope;
    Defer([&] {
      log += "a";
      Defer([&] { log += "b"; });
    });
    scope.Run();
    EXPECT_EQ(log, "ab");
  }
}

// With a runner, the work runs on the runner's thread, in order, after Run hands it over; the
// runner's destructor runs what is still queued.
TEST(AfterReplyTest, ARunnerRunsTheWorkOnItsThreadInOrder) {
  std::vector<int> order;
  std::thread::id ran_on;
  Mutex mu;
  {
    AfterReplyRunner runner;
    for (int round = 0; round < 3; ++round) {
      AfterReplyScope scope(&runner);
      for (int i = 0; i < 100; ++i) {
        Defer([&, n = round * 100 + i] {
          MutexLock lock(&mu);
          order.push_back(n);
          ran_on = std::this_thread::get_id();
        });
      }
      {
        MutexLock lock(&mu);
        // The earlier rounds may still be running; nothing of this round has started.
        EXPECT_LE(order.size(), static_cast<size_t>(round * 100)) << "nothing before Run";
      }
      scope.Run();
    }
  }
  ASSERT_EQ(order.size(), 300u);
  for (int i = 0; i < 300; ++i) EXPECT_EQ(order[i], i);
  EXPECT_NE(ran_on, std::this_thread::get_id());
}

// A full runner refuses: the scope's own thread runs that work, so none is lost.
TEST(AfterReplyTest, WorkARunnerRefusesRunsOnTheScopesThread) {
  std::atomic<int> inline_runs{0};
  std::atomic<int> runs{0};
  Mutex gate;
  gate.Lock();  // holds the runner's first task, so the queue fills
  {
    AfterReplyRunner runner(/*max_queued=*/2);
    AfterReplyScope scope(&runner);
    const std::thread::id me = std::this_thread::get_id();
    Defer([&] {
      MutexLock wait(&gate);
      ++runs;
    });
    for (int i = 0; i < 5; ++i) {
      Defer([&, me] {
        if (std::this_thread::get_id() == me) ++inline_runs;
        ++runs;
      });
    }
    scope.Run();
    EXPECT_GE(inline_runs.load(), 3) << "at most 2 wait in the runner, one of them the gate";
    gate.Unlock();
  }
  EXPECT_EQ(runs.load(), 6);
}

}  // namespace
}  // namespace archil
