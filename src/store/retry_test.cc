#include "store/retry.h"

#include <gtest/gtest.h>

namespace archil::store {
namespace {

TEST(Retry, WhatIsRetried) {
  for (int s : {408, 429, 500, 502, 503, 504}) EXPECT_TRUE(IsRetryableReply(s, "")) << s;
  EXPECT_TRUE(IsRetryableReply(400, "RequestTimeout"));
  EXPECT_TRUE(IsRetryableReply(409, "ConditionalRequestConflict"));
  for (int s : {200, 204, 206, 400, 403, 404, 409, 412, 416, 501}) {
    EXPECT_FALSE(IsRetryableReply(s, "")) << s;
  }
  EXPECT_FALSE(IsRetryableReply(400, "MalformedXML"));
}

TEST(Retry, BackoffIsJitteredUnderAGrowingCeiling) {
  RetryPolicy p;
  p.max_attempts = 100;
  p.base = std::chrono::milliseconds(10);
  p.cap = std::chrono::milliseconds(500);
  p.deadline = std::chrono::hours(1);
  Backoff b(p, 42);
  const auto start = std::chrono::steady_clock::now();
  bool varied = false;
  int64_t last = -1;
  for (int attempt = 1; attempt < 40; ++attempt) {
    const int64_t ms = b.Next(attempt, start).count();
    ASSERT_GE(ms, 0);
    EXPECT_LE(ms, std::min<int64_t>(500, int64_t{10} << std::min(attempt, 20)));
    varied = varied || (last >= 0 && ms != last);
    last = ms;
  }
  EXPECT_TRUE(varied);
}

TEST(Retry, AttemptsAndDeadlineEndIt) {
  RetryPolicy p;
  p.max_attempts = 3;
  Backoff b(p, 1);
  const auto now = std::chrono::steady_clock::now();
  EXPECT_GE(b.Next(1, now).count(), 0);
  EXPECT_GE(b.Next(2, now).count(), 0);
  EXPECT_LT(b.Next(3, now).count(), 0);
  p.max_attempts = 100;
  p.deadline = std::chrono::milliseconds(1000);
  Backoff late(p, 1);
  EXPECT_LT(late.Next(1, now - std::chrono::seconds(5)).count(), 0);
}

}  // namespace
}  // namespace archil::store
