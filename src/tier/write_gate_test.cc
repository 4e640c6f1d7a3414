#include "tier/write_gate.h"

#include <gtest/gtest.h>

#include <cerrno>

namespace archil::tier {
namespace {

TEST(WriteGate, AHealthyDiskUnderItsBacklogWrites) {
  WriteGateState s;
  s.backlog.bytes = 100;
  EXPECT_TRUE(AdmitWrite(s, {.max_backlog_bytes = 100}).ok());
}

TEST(WriteGate, ABacklogOverTheBoundMakesWritesWaitNotFail) {
  WriteGateState s;
  s.backlog.bytes = (uint64_t{3} << 20) + 1;
  Status g = AdmitWrite(s, {.max_backlog_bytes = uint64_t{3} << 20});
  EXPECT_EQ(g.code(), Status::Code::kUnavailable) << g.ToString();
  EXPECT_NE(g.message().find("3 MiB of this disk wait"), std::string::npos) << g.ToString();
}

TEST(WriteGate, ALapsedLeaseMakesWritesWait) {
  WriteGateState s;
  s.lease_valid = false;
  s.lease_age_ms = 14000;
  Status g = AdmitWrite(s, {});
  EXPECT_EQ(g.code(), Status::Code::kUnavailable);
  EXPECT_NE(g.message().find("14 s"), std::string::npos) << g.ToString();
}

TEST(WriteGate, AStoppedDiskRefusesWritesWithEio) {
  WriteGateState s;
  s.stopped = "another writer stored this name";
  s.lease_valid = false;  // refused, not delayed, whatever the lease
  Status g = AdmitWrite(s, {});
  EXPECT_EQ(ErrnoFor(g), EIO) << g.ToString();
  EXPECT_NE(g.message().find("another writer"), std::string::npos);
}

TEST(WriteGate, AFencedServerRefusesEverything) {
  WriteGateState s;
  s.fenced = true;
  s.fenced_by = "srv-2 (generation 3)";
  s.stopped = "x";
  Status g = AdmitWrite(s, {});
  EXPECT_EQ(ErrnoFor(g), EROFS);
  EXPECT_NE(g.message().find("srv-2"), std::string::npos);
}

}  // namespace
}  // namespace archil::tier
