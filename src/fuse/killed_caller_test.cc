#include "fuse/killed_caller.h"

#include <gtest/gtest.h>
#include <unistd.h>

namespace archil::fuse {
namespace {

constexpr char kQuiet[] =
    "Name:\tgit\nState:\tD (disk sleep)\nSigQ:\t1/95123\nSigPnd:\t0000000000000000\n"
    "ShdPnd:\t0000000000004000\nSigBlk:\t0000000000000000\nSigIgn:\t0000000000001000\n";
constexpr char kKilledThread[] =
    "Name:\tgit\nSigPnd:\t0000000000000100\nShdPnd:\t0000000000000000\nSigBlk:\t0\n";
constexpr char kKilledGroup[] = "Name:\tgit\nSigPnd:\t0\nShdPnd:\t0000000000000100\n";

TEST(KilledCaller, ReadsSigKillFromEitherPendingMask) {
  EXPECT_FALSE(SigKillPending(kQuiet));  // a pending SIGTERM (bit 15) is not a kill
  EXPECT_TRUE(SigKillPending(kKilledThread));
  EXPECT_TRUE(SigKillPending(kKilledGroup));
  EXPECT_FALSE(SigKillPending(""));
  EXPECT_FALSE(SigKillPending("SigPnd:"));
  EXPECT_FALSE(SigKillPending("XSigPnd:\t100\n"));  // a field must start its line
}

TEST(KilledCaller, ALiveProcessIsNotKilledAndAGoneOneIs) {
  EXPECT_FALSE(KilledCaller(gettid()).Cancelled());
  EXPECT_FALSE(KilledCaller(0).Cancelled());  // the kernel's own requests
  EXPECT_TRUE(KilledCaller(999999999).Cancelled());
}

}  // namespace
}  // namespace archil::fuse
