#include "server/cpu_share.h"

#include <gtest/gtest.h>

namespace archil::server {
namespace {

constexpr int64_t kMs = 1'000'000;

// A disk alone may use every CPU: however much it spends, its requests run at once.
TEST(CpuShare, ADiskAloneIsNeverHeld) {
  CpuShare share({.cpus = 1, .window_ns = 200 * kMs, .burst_ns = 10 * kMs});
  int64_t now = 1000 * kMs;
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(share.ReleaseTime(1, now), now);
    now += kMs;
    share.Charge(1, kMs, now);  // a whole CPU
  }
}

// Two disks active on one CPU: each earns a third of it. The one that spends a whole CPU is held
// until it has earned back what it overspent; the one that spends little is never held.
TEST(CpuShare, AHogIsHeldAndALightDiskIsNot) {
  CpuShare share({.cpus = 1, .window_ns = 200 * kMs, .burst_ns = 10 * kMs});
  int64_t now = 1000 * kMs;
  int64_t held_ns = 0, hog_cpu_ns = 0;
  const int64_t start = now;
  while (now - start < 1000 * kMs) {
    EXPECT_EQ(share.ReleaseTime(2, now), now) << "the light disk waits for nothing";
    share.Charge(2, 50'000, now);  // 50 us per ms: 5 % of the CPU
    const int64_t release = share.ReleaseTime(1, now);
    ASSERT_GE(release, now);
    if (release > now) {
      held_ns += release - now;
      now = release;
      continue;
    }
    now += kMs;
    share.Charge(1, kMs, now);
    hog_cpu_ns += kMs;
  }
  EXPECT_GT(held_ns, 500 * kMs);
  // Over a second the hog got its third of the CPU and its burst, give or take a request.
  EXPECT_LE(hog_cpu_ns, 1000 * kMs / 3 + 10 * kMs + 2 * kMs);
  EXPECT_GE(hog_cpu_ns, 1000 * kMs / 3 - 2 * kMs);
}

// Once the other disk has been quiet for the window, the hog is alone again and runs at once;
// and a disk forgotten while owing nothing starts with a full bucket.
TEST(CpuShare, TheShareEndsWhenTheOtherDiskGoesQuiet) {
  CpuShare share({.cpus = 2, .window_ns = 200 * kMs, .burst_ns = 10 * kMs});
  int64_t now = 1000 * kMs;
  share.ReleaseTime(2, now);
  share.ReleaseTime(1, now);
  share.Charge(1, 40 * kMs, now);  // 30 ms beyond its burst, at 2/3 of a CPU a second: 45 ms
  const int64_t release = share.ReleaseTime(1, now);
  EXPECT_GE(release, now + 44 * kMs);
  EXPECT_LE(release, now + 46 * kMs);
  now += 201 * kMs;  // disk 2 has been quiet for a window
  EXPECT_EQ(share.ReleaseTime(1, now), now);
}

// Letting connections in has its own bucket at admission_cpus: a round that overspends holds
// the next one until it has earned back the excess, at that rate.
TEST(CpuShare, AdmissionIsHeldToItsOwnRate) {
  CpuShare share({.cpus = 1, .window_ns = 200 * kMs, .burst_ns = 10 * kMs, .admission_cpus = 0.25});
  int64_t now = 1000 * kMs;
  const int64_t start = now;
  int64_t spent = 0;
  while (now - start < 1000 * kMs) {
    const int64_t release = share.AdmissionReleaseTime(now);
    ASSERT_GE(release, now);
    if (release > now) {
      now = release;
      continue;
    }
    now += kMs;
    share.ChargeAdmission(kMs, now);  // a whole CPU while it runs
    spent += kMs;
  }
  // A quarter of a second of CPU in a second, plus its burst, give or take a round.
  EXPECT_LE(spent, 250 * kMs + 10 * kMs + 2 * kMs);
  EXPECT_GE(spent, 250 * kMs - 2 * kMs);
}

// Admission is not a disk: however busy it is, a disk alone is never held, and two disks still
// share at a third each (not a quarter, as a third active disk would make it).
TEST(CpuShare, AdmissionTakesNothingFromTheDisksShares) {
  CpuShare share({.cpus = 1, .window_ns = 200 * kMs, .burst_ns = 10 * kMs});
  int64_t now = 1000 * kMs;
  for (int i = 0; i < 50; ++i) {
    share.ChargeAdmission(kMs, now);
    EXPECT_EQ(share.ReleaseTime(1, now), now);
    now += kMs;
    share.Charge(1, kMs, now);
  }
  share.ReleaseTime(2, now);
  // 9 ms left of its burst (its last request spent 1 ms): 31 ms beyond it, at a third of a CPU
  // a second, is 93 ms.
  share.Charge(1, 40 * kMs, now);
  share.ChargeAdmission(40 * kMs, now);
  const int64_t release = share.ReleaseTime(1, now);
  EXPECT_GE(release, now + 92 * kMs);
  EXPECT_LE(release, now + 94 * kMs);
}

TEST(CpuShare, TheMachineIsMeasured) {
  EXPECT_GE(CpuShare::AvailableCpus(), 1);
  const int64_t before = CpuShare::ThreadCpuNanos();
  volatile uint64_t x = 0;
  for (int i = 0; i < 10'000'000; ++i) x = x + i;
  EXPECT_GT(CpuShare::ThreadCpuNanos(), before);
}

}  // namespace
}  // namespace archil::server
