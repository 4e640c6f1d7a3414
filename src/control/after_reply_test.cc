// AfterReplyScope: deferred work waits for Run (or the scope's end), in order; without a scope it
// runs at once; work deferred while the queue runs runs too.
#include "control/after_reply.h"

#include <gtest/gtest.h>

#include <string>

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

}  // namespace
}  // namespace archil
