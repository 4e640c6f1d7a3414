#include "server/slot_table.h"

#include <gtest/gtest.h>

#include <thread>

namespace archil::server {
namespace {

using proto::WireStatus;

TEST(SlotTable, NewRetryAndMisorderedRequests) {
  SlotTable t(2);
  CachedReply c;
  EXPECT_EQ(t.Begin(2, 1, &c), SlotVerdict::kInvalid);
  EXPECT_EQ(t.Begin(0, 0, &c), SlotVerdict::kMisordered);  // seqs start at 1
  EXPECT_EQ(t.Begin(0, 2, &c), SlotVerdict::kMisordered);  // a gap
  ASSERT_EQ(t.Begin(0, 1, &c), SlotVerdict::kExecute);
  EXPECT_EQ(t.Begin(0, 2, &c), SlotVerdict::kMisordered);  // two requests in one slot
  t.Finish(0, 1, {WireStatus::kOk, "one"});
  ASSERT_EQ(t.Begin(0, 1, &c), SlotVerdict::kReplay);
  EXPECT_EQ(c, (CachedReply{WireStatus::kOk, "one"}));
  ASSERT_EQ(t.Begin(0, 2, &c), SlotVerdict::kExecute);
  t.Finish(0, 2, {WireStatus::kExists, "two"});
  EXPECT_EQ(t.Begin(0, 1, &c), SlotVerdict::kMisordered);  // older than the cached one
  ASSERT_EQ(t.Begin(0, 2, &c), SlotVerdict::kReplay);
  EXPECT_EQ(c.status, WireStatus::kExists);
  EXPECT_EQ(t.LastSeqs(), (std::vector<uint64_t>{2, 0}));
}

TEST(SlotTable, ARestoredSlotAcceptsAGapOnceAndReplaysItsStoredReply) {
  SlotTable t(4);
  t.Restore(3, 10, {WireStatus::kOk, "stored"});
  t.Restore(9, 1, {});  // out of range: ignored
  CachedReply c;
  ASSERT_EQ(t.Begin(3, 10, &c), SlotVerdict::kReplay);
  EXPECT_EQ(c.body, "stored");
  EXPECT_EQ(t.Begin(3, 9, &c), SlotVerdict::kMisordered);
  // Seqs 11..14 went to state operations whose replies were not stored.
  ASSERT_EQ(t.Begin(3, 15, &c), SlotVerdict::kExecute);
  t.Finish(3, 15, {});
  EXPECT_EQ(t.Begin(3, 17, &c), SlotVerdict::kMisordered);  // the gap is allowed once only
}

TEST(SlotTable, ARetryOfARunningRequestWaitsForItsAnswer) {
  SlotTable t(1);
  CachedReply c;
  ASSERT_EQ(t.Begin(0, 1, &c), SlotVerdict::kExecute);
  SlotVerdict retry{};
  CachedReply retried;
  std::thread other([&] { retry = t.Begin(0, 1, &retried); });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  t.Finish(0, 1, {WireStatus::kOk, "answer"});
  other.join();
  EXPECT_EQ(retry, SlotVerdict::kReplay);
  EXPECT_EQ(retried.body, "answer");
}

}  // namespace
}  // namespace archil::server
