// Sessions and reply-cache slots in the engine: stored, loaded, deleted, and a slot written in
// the very batch of the operation it answers (engine/commit/commit_hooks.h).
#include <gtest/gtest.h>
#include <sys/stat.h>

#include "engine/engine_fixture.h"
#include "engine/test_util.h"

namespace archil::engine {
namespace {

using posix::kRootIno;
using testing::Err;

SessionRecord Session(uint16_t slots) {
  SessionRecord r;
  r.slots = slots;
  r.lease_ms = 15000;
  r.root_ino = Ino(1);
  r.holder_id = {1, 2, 3, 4, 5, 6, 7, 8};
  r.hostname = "host";
  r.mount_path = "/mnt";
  r.token_id = "0123456789abcdef";
  return r;
}

constexpr SessionIdBytes kId{9, 9, 9};

// An epilogue writing slot `slot` whose body is the result's inode number ("-" without one).
CommitEpilogue SlotOf(Engine& e, uint32_t slot, uint64_t seq) {
  return e.SlotEpilogue(DiskNo(1), kId, slot, [seq](const CommitResult& r) {
    return SlotRecord{0, 0x0105, seq, r.attr ? std::to_string(r.attr->ino.value()) : "-"};
  });
}

TEST_F(EngineTest, SessionsAreStoredLoadedAndDeletedWithTheirSlots) {
  DiskFs* fs = NewDisk(1);
  ASSERT_TRUE(engine_->PutSession(DiskNo(1), kId, Session(4)).ok());
  ASSERT_TRUE(
      fs->Mkdir(kRootIno, "d", 0755, {}, CommitHooks{.epilogue = SlotOf(*engine_, 2, 7)}).ok());
  Result<std::vector<StoredSession>> s = engine_->Sessions(DiskNo(1));
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ASSERT_EQ(s->size(), 1u);
  EXPECT_EQ((*s)[0].id, kId);
  EXPECT_EQ((*s)[0].record, Session(4));
  ASSERT_EQ((*s)[0].slots.size(), 1u);
  EXPECT_EQ((*s)[0].slots.at(2).seq, 7u);
  EXPECT_EQ((*s)[0].slots.at(2).body, std::to_string(fs->Lookup(kRootIno, "d")->ino.value()));
  EXPECT_TRUE(engine_->Sessions(DiskNo(2))->empty());

  ASSERT_TRUE(engine_->DeleteSession(DiskNo(1), kId).ok());
  EXPECT_TRUE(engine_->Sessions(DiskNo(1))->empty());
  EXPECT_EQ(*engine_->CountKeys(DiskNo(1), Cf::kSession), 0u);
}

TEST_F(EngineTest, ACheckpointAnswersFromItsOwnCommit) {
  DiskFs* fs = NewDisk(1);
  ASSERT_TRUE(engine_->PutSession(DiskNo(1), kId, Session(4)).ok());
  CommitHooks answer{.epilogue =
                         engine_->SlotEpilogue(DiskNo(1), kId, 5, [](const CommitResult& r) {
                           return SlotRecord{0, 0x0601, 1,
                                             std::to_string(r.checkpoint_epoch) + "@" +
                                                 std::to_string(r.checkpoint_created_ns > 0)};
                         })};
  ASSERT_EQ(*fs->Checkpoint("one", answer), Epoch(1));
  EXPECT_EQ(Err(fs->Checkpoint("one", CommitHooks{.epilogue = SlotOf(*engine_, 6, 1)})),
            EEXIST);  // no slot record
  const auto slots = engine_->Sessions(DiskNo(1))->at(0).slots;
  ASSERT_EQ(slots.size(), 1u);
  EXPECT_EQ(slots.at(5).body, "1@1");
}

TEST_F(EngineTest, AFailedOperationWritesNoSlotAndHooksRunOnlyForTheirOperation) {
  DiskFs* fs = NewDisk(1);
  ASSERT_TRUE(engine_->PutSession(DiskNo(1), kId, Session(4)).ok());
  ASSERT_TRUE(fs->Mkdir(kRootIno, "d", 0755, {}).ok());
  int queued = 0;
  auto hooks = [&](uint32_t slot, uint64_t seq) {
    return CommitHooks{.epilogue = SlotOf(*engine_, slot, seq),
                       .on_queued = [&queued] { ++queued; }};
  };
  // Refused before it reaches the queue: neither hook runs.
  EXPECT_EQ(Err(fs->Mkdir(kRootIno, "a/b", 0755, {}, hooks(0, 1))), EINVAL);
  EXPECT_EQ(queued, 0);
  // Failed in its prepare: it was queued, and wrote no slot.
  EXPECT_EQ(Err(fs->Mkdir(kRootIno, "d", 0755, {}, hooks(0, 1))), EEXIST);
  EXPECT_EQ(queued, 1);
  EXPECT_TRUE(engine_->Sessions(DiskNo(1))->at(0).slots.empty());
  ASSERT_TRUE(fs->Rmdir(kRootIno, "d", hooks(0, 2)).ok());  // an answer from no result
  EXPECT_EQ(queued, 2);
  ASSERT_TRUE(fs->Mkdir(kRootIno, "e", 0755, {}).ok());  // no hooks: the slot stays as it was
  EXPECT_EQ(queued, 2);
  const auto slots = engine_->Sessions(DiskNo(1))->at(0).slots;
  ASSERT_EQ(slots.size(), 1u);
  EXPECT_EQ(slots.at(0).seq, 2u);
  EXPECT_EQ(slots.at(0).body, "-");
}

TEST_F(EngineTest, ASlotIsDurableWithItsOperationAndAnUnusedSessionMayVanish) {
  DiskFs* fs = NewDisk(1);
  ASSERT_TRUE(fs->Mkdir(kRootIno, "sync", 0755, {}).ok());  // the disk itself is durable
  ASSERT_TRUE(engine_->PutSession(DiskNo(1), kId, Session(4)).ok());
  engine_.reset();
  env_.SimulatePowerLoss(3);
  Reopen();
  // Nothing synced the session record: it is gone, and no operation of it survived either.
  EXPECT_TRUE(engine_->Sessions(DiskNo(1))->empty());

  fs = *engine_->Disk(DiskNo(1));
  ASSERT_TRUE(engine_->PutSession(DiskNo(1), kId, Session(4)).ok());
  Result<posix::Attr> a = fs->Mknod(kRootIno, "f", S_IFREG | 0644, 0, {},
                                    CommitHooks{.epilogue = SlotOf(*engine_, 3, 11)});
  ASSERT_TRUE(a.ok());
  const posix::Ino f = a->ino;
  engine_.reset();
  env_.SimulatePowerLoss(4);
  Reopen();
  const auto s = engine_->Sessions(DiskNo(1));
  ASSERT_EQ(s->size(), 1u);  // the operation's sync carried the session record before it
  EXPECT_EQ(s->at(0).slots.at(3).seq, 11u);
  EXPECT_EQ(s->at(0).slots.at(3).body, std::to_string(f.value()));
  EXPECT_TRUE((*engine_->Disk(DiskNo(1)))->Lookup(kRootIno, "f").ok());
}

TEST_F(EngineTest, TheBootVerifierChangesAtEveryOpen) {
  const uint64_t first = engine_->boot_verifier();
  Reopen();
  EXPECT_NE(engine_->boot_verifier(), first);
}

}  // namespace
}  // namespace archil::engine
