#include "base/clock.h"

#include <gtest/gtest.h>

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

TEST(ClockTest, SystemClockIsMonotonic) {
  const Clock& clock = SystemClock::Instance();
  int64_t a = clock.MonotonicNanos();
  int64_t b = clock.MonotonicNanos();
  EXPECT_LE(a, b);
  EXPECT_GT(clock.NowMicros(), 1700000000LL * 1000000);
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
