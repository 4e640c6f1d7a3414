// Clock: the one seam for time, passed in (never global) so tests control it.
//
// Thread-safety: implementations are safe to call from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

namespace archil {

class Clock {
 public:
  virtual ~Clock() = default;
  // Wall-clock time in microseconds since the Unix epoch; may jump.
  virtual int64_t NowMicros() const = 0;
  // Wall-clock time in nanoseconds since the Unix epoch (file times); may jump.
  virtual int64_t NowNanos() const { return NowMicros() * 1000; }
  // Monotonic time in nanoseconds from an arbitrary origin; never goes back.
  virtual int64_t MonotonicNanos() const = 0;
  // As MonotonicNanos, but it also counts while the machine is suspended (CLOCK_BOOTTIME): what a
  // lease is measured on, so that a machine that slept knows its lease ran out meanwhile.
  virtual int64_t BootNanos() const { return MonotonicNanos(); }
};

// The operating system's clocks (CLOCK_REALTIME, CLOCK_MONOTONIC, CLOCK_BOOTTIME).
class SystemClock final : public Clock {
 public:
  int64_t NowMicros() const override;
  int64_t NowNanos() const override;
  int64_t MonotonicNanos() const override;
  int64_t BootNanos() const override;
  // A process-wide instance for code with no injected clock (main() only).
  static const SystemClock& Instance();
};

// A clock that moves only when told to. Starts at 2026-01-01T00:00:00Z.
class FakeClock final : public Clock {
 public:
  int64_t NowMicros() const override { return micros_.load(); }
  int64_t MonotonicNanos() const override { return micros_.load() * 1000; }
  void Advance(int64_t micros) { micros_.fetch_add(micros); }

 private:
  std::atomic<int64_t> micros_{1767225600LL * 1000000};
};

// RFC 3339 UTC with millisecond precision: "2026-11-30T03:24:25.123Z".
std::string FormatRfc3339(int64_t micros_since_epoch);

}  // namespace archil
