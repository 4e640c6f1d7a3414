#include "base/clock.h"

#include <gtest/gtest.h>
#include <time.h>

#include <chrono>
#include <thread>

#include "base/log.h"

namespace archil {
namespace {

TEST(ClockTest, FakeClockMovesOnlyWhenTold) {
  FakeClock clock;
  int64_t t0 = clock.NowMicros();
  EXPECT_EQ(clock.NowMicros(), t0);
  clock.Advance(1500);
  EXPECT_EQ(clock.NowMicros(), t0 + 1500);
  EXPECT_EQ(FormatRfc3339(t0), "2026-01-01T00:00:00.000Z");
  EXPECT_EQ(FormatRfc3339(t0 + 1500), "2026-01-01T00:00:00.001Z");
}

// The system clock against the kernel's own clocks read around it: a wrong clock id, a unit slip
// (ms for us, us for ns) or an epoch offset all fail here.
TEST(ClockTest, SystemClockReadsTheKernelClocksInTheRightUnits) {
  const Clock& clock = SystemClock::Instance();
  timespec before{}, after{};
  clock_gettime(CLOCK_MONOTONIC, &before);
  int64_t mono = clock.MonotonicNanos();
  clock_gettime(CLOCK_MONOTONIC, &after);
  EXPECT_GE(mono, before.tv_sec * 1000000000LL + before.tv_nsec);
  EXPECT_LE(mono, after.tv_sec * 1000000000LL + after.tv_nsec);

  clock_gettime(CLOCK_REALTIME, &before);
  int64_t wall = clock.NowMicros();
  clock_gettime(CLOCK_REALTIME, &after);
  EXPECT_GE(wall, before.tv_sec * 1000000LL + before.tv_nsec / 1000);
  EXPECT_LE(wall, after.tv_sec * 1000000LL + after.tv_nsec / 1000);

  // Monotonic time advances across a sleep by at least the sleep.
  int64_t a = clock.MonotonicNanos();
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_GE(clock.MonotonicNanos() - a, 5000000);
}

TEST(LogTest, ParsesLevels) {
  EXPECT_EQ(*ParseLogLevel("warn"), LogLevel::kWarn);
  EXPECT_FALSE(ParseLogLevel("loud").ok());
  EXPECT_EQ(LogLevelName(LogLevel::kDebug), "debug");
}

class CaptureSink : public LogSink {
 public:
  explicit CaptureSink(std::string* out) : out_(out) {}
  void Write(LogLevel, std::string_view line) override { *out_ += std::string(line) + "\n"; }

 private:
  std::string* out_;
};

TEST(LogTest, DisabledLevelsAreNotEvaluated) {
  std::string captured;
  SetLogSink(std::make_unique<CaptureSink>(&captured));
  SetLogLevel(LogLevel::kWarn);
  int evaluated = 0;
  auto touch = [&] { return ++evaluated; };
  ARCHIL_LOG(kInfo) << touch();
  ARCHIL_LOG(kError) << "boom " << touch();
  SetLogLevel(LogLevel::kInfo);
  SetLogSink(MakeStderrSink());
  EXPECT_EQ(evaluated, 1);
  EXPECT_NE(captured.find(" E clock_test.cc:"), std::string::npos);
  EXPECT_NE(captured.find("boom 1"), std::string::npos);
}

}  // namespace
}  // namespace archil
