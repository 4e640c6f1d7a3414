#include "base/clock.h"

#include <ctime>

namespace archil {
namespace {

int64_t Read(clockid_t id, int64_t divisor) {
  timespec ts{};
  clock_gettime(id, &ts);
  return (static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec) / divisor;
}

}  // namespace

int64_t SystemClock::NowMicros() const { return Read(CLOCK_REALTIME, 1000); }
int64_t SystemClock::NowNanos() const { return Read(CLOCK_REALTIME, 1); }
int64_t SystemClock::MonotonicNanos() const { return Read(CLOCK_MONOTONIC, 1); }
int64_t SystemClock::BootNanos() const { return Read(CLOCK_BOOTTIME, 1); }

const SystemClock& SystemClock::Instance() {
  static const SystemClock clock;
  return clock;
}

std::string FormatRfc3339(int64_t micros_since_epoch) {
  time_t secs = static_cast<time_t>(micros_since_epoch / 1000000);
  int millis = static_cast<int>((micros_since_epoch % 1000000) / 1000);
  tm utc{};
  gmtime_r(&secs, &utc);
  char buf[40];
  size_t n = strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &utc);
  snprintf(buf + n, sizeof(buf) - n, ".%03dZ", millis);
  return buf;
}

}  // namespace archil
