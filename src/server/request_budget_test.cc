#include "server/request_budget.h"

#include <gtest/gtest.h>

namespace archil::server {
namespace {

constexpr uint64_t kMiB = uint64_t{1} << 20;
constexpr RequestBudget::Verdict kOk = RequestBudget::Verdict::kAdmitted;

// 256 connections of one disk each holding a 4 MiB frame cannot keep another disk out.
TEST(RequestBudget, OneDiskCannotTakeWhatOtherDisksNeed) {
  RequestBudget b({.total = 1024 * kMiB, .per_disk = 256 * kMiB, .per_connection = 64 * kMiB});
  int admitted = 0;
  for (int c = 0; c < 256; ++c) admitted += b.TryCharge(7, 0, 4 * kMiB) == kOk ? 1 : 0;
  EXPECT_EQ(admitted, 64);  // the disk's share
  EXPECT_EQ(b.of_disk(7), 256 * kMiB);
  EXPECT_EQ(b.TryCharge(8, 0, 4096), kOk);  // another disk goes on
  EXPECT_EQ(b.TryCharge(8, 4096, 4096), kOk);
  b.Discharge(7, 4 * kMiB);
  EXPECT_EQ(b.TryCharge(7, 0, 4 * kMiB), kOk);  // a released share is taken again
  EXPECT_NE(b.TryCharge(7, 0, 4 * kMiB), kOk);
}

TEST(RequestBudget, AConnectionIsBoundedButAlwaysGetsOneFrame) {
  RequestBudget b({.total = 1024 * kMiB, .per_disk = 256 * kMiB, .per_connection = 8 * kMiB});
  EXPECT_EQ(b.TryCharge(1, 0, 4 * kMiB), kOk);
  EXPECT_EQ(b.TryCharge(1, 4 * kMiB, 4 * kMiB), kOk);
  EXPECT_NE(b.TryCharge(1, 8 * kMiB, 1), kOk);
  EXPECT_EQ(b.TryCharge(1, 0, 4 * kMiB), kOk) << "another connection of the disk";
}

// When the total is full (many disks each within its share), a disk holding nothing still gets
// one frame in: every disk makes progress.
TEST(RequestBudget, TheTotalNeverStopsADiskThatHoldsNothing) {
  RequestBudget b({.total = 16 * kMiB, .per_disk = 8 * kMiB, .per_connection = 8 * kMiB});
  EXPECT_EQ(b.TryCharge(1, 0, 8 * kMiB), kOk);
  EXPECT_EQ(b.TryCharge(2, 0, 8 * kMiB), kOk);
  EXPECT_EQ(b.TryCharge(2, 0, 1), RequestBudget::Verdict::kOverShare) << "its share is full";
  EXPECT_EQ(b.TryCharge(3, 0, 4 * kMiB), kOk) << "over the total, but disk 3 held nothing";
  EXPECT_EQ(b.TryCharge(3, 0, 1), RequestBudget::Verdict::kOverTotal)
      << "now it holds something, and the total is full";
  EXPECT_EQ(b.total(), 20 * kMiB);
  EXPECT_EQ(b.peak(), 20 * kMiB);
  b.Discharge(1, 8 * kMiB);
  b.Discharge(2, 8 * kMiB);
  b.Discharge(3, 4 * kMiB);
  EXPECT_EQ(b.total(), 0u);
  EXPECT_EQ(b.of_disk(3), 0u);
  EXPECT_EQ(b.discharges(), 3u);
}

TEST(RequestBudget, UnboundConnectionsAreCountedNotGated) {
  RequestBudget b({.total = 1 * kMiB, .per_disk = 1 * kMiB, .per_connection = 1 * kMiB});
  for (int i = 0; i < 64; ++i) EXPECT_EQ(b.TryCharge(0, 0, 64 << 10), kOk);
  EXPECT_EQ(b.total(), 4 * kMiB);
  b.Discharge(0, 4 * kMiB);
  EXPECT_EQ(b.total(), 0u);
  b.Discharge(9, 100);  // nothing charged there: no effect
  EXPECT_EQ(b.total(), 0u);
}

TEST(RequestBudget, RoomIsWhatTheDisksShareAndTheTotalLeave) {
  RequestBudget b({.total = 16 * kMiB, .per_disk = 8 * kMiB, .per_connection = 8 * kMiB});
  EXPECT_EQ(b.Room(1), UINT64_MAX) << "a disk holding nothing gets its next frame in";
  EXPECT_EQ(b.TryCharge(1, 0, 3 * kMiB), kOk);
  EXPECT_EQ(b.Room(1), 5 * kMiB) << "its share";
  EXPECT_EQ(b.TryCharge(2, 0, 8 * kMiB), kOk);
  EXPECT_EQ(b.TryCharge(3, 0, 4 * kMiB), kOk);
  EXPECT_EQ(b.TotalRoom(), 1 * kMiB);
  EXPECT_EQ(b.Room(1), 1 * kMiB) << "the total";
  EXPECT_EQ(b.Room(2), 0u);
  EXPECT_EQ(b.TryCharge(1, 0, 1 * kMiB + 1), RequestBudget::Verdict::kOverTotal);
  EXPECT_EQ(b.TryCharge(1, 0, 1 * kMiB), kOk) << "what Room said fits does";
  EXPECT_EQ(b.Room(1), 0u);
  EXPECT_EQ(b.TotalRoom(), 0u);
}

}  // namespace
}  // namespace archil::server
