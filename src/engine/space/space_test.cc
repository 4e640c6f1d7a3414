// Space: segments freed by overwrites and deletes, kept for checkpoints and (with a tier) until
// uploaded, and a full disk that refuses writes but never deletes.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>

#include "engine/engine.h"
#include "io/sim_env.h"

namespace archil::engine {
namespace {

class SpaceTest : public ::testing::Test {
 protected:
  void Open(bool tiered) {
    engine_.reset();
    EngineOptions o;
    o.env = &env_;
    o.dir = "/data";
    o.clock = &clock_;
    o.segment_blocks = 16;  // 64 KiB segments
    o.intent_sync_ms = 0;
    o.rocks_max_sleep_micros = 0;
    o.block_cache_mb = 8;
    o.keep_segments_until_uploaded = tiered;
    o.reserve_bytes = 1 << 20;
    Result<std::unique_ptr<Engine>> e = Engine::Open(o);
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    engine_ = std::move(e).value();
  }
  size_t SegmentFiles() { return env_.ListDir("/data/segments/0000000000000001")->size(); }
  // Rewrites the same 64 KiB 40 times: 40 segments' worth of writes, one segment's worth live.
  void Churn(posix::FileSystem* fs, posix::Ino f) {
    for (int i = 0; i < 40; ++i) {
      ASSERT_TRUE(fs->Write(f, 0, std::string(65536, static_cast<char>('a' + i % 26))).ok());
    }
  }
  io::SimEnv env_;
  FakeClock clock_;
  std::unique_ptr<Engine> engine_;
};

TEST_F(SpaceTest, OverwrittenSegmentsAreDeleted) {
  Open(false);
  ASSERT_TRUE(engine_->CreateDisk(DiskNo(1), {}).ok());
  posix::FileSystem* fs = *engine_->Disk(DiskNo(1));
  posix::Ino f = fs->Mknod(posix::kRootIno, "f", S_IFREG | 0644, 0, {})->ino;
  Churn(fs, f);
  EXPECT_LE(SegmentFiles(), 3u);
  ASSERT_TRUE(engine_->CheckInvariants().ok());
  // A checkpoint keeps what it sees: its segment survives the churn, and goes with it.
  ASSERT_TRUE(engine_->Checkpoint(DiskNo(1), "keep").ok());
  Churn(fs, f);
  EXPECT_LE(SegmentFiles(), 4u);
  ASSERT_TRUE(engine_->DeleteCheckpoint(DiskNo(1), "keep").ok());
  EXPECT_LE(SegmentFiles(), 3u);
  ASSERT_TRUE(fs->Unlink(posix::kRootIno, "f").ok());
  EXPECT_LE(SegmentFiles(), 1u);  // at most the open one
  ASSERT_TRUE(engine_->CheckInvariants().ok());
  Open(false);
  EXPECT_EQ(SegmentFiles(), 0u);  // the open one was sealed at restart with nothing live
  ASSERT_TRUE(engine_->CheckInvariants().ok());
}

TEST_F(SpaceTest, WithATierSegmentsWaitForTheirUpload) {
  Open(true);
  ASSERT_TRUE(engine_->CreateDisk(DiskNo(1), {}).ok());
  posix::FileSystem* fs = *engine_->Disk(DiskNo(1));
  posix::Ino f = fs->Mknod(posix::kRootIno, "f", S_IFREG | 0644, 0, {})->ino;
  Churn(fs, f);
  std::vector<std::string> names = *env_.ListDir("/data/segments/0000000000000001");
  EXPECT_GE(names.size(), 39u);  // nothing uploaded: everything stays
  std::sort(names.begin(), names.end());
  // Upload all but the newest (open) one: the dead ones go, the live one stays.
  for (size_t i = 0; i + 1 < names.size(); ++i) {
    SegNo seg(std::stoull(names[i], nullptr, 16));
    ASSERT_TRUE(engine_->SegmentUploaded(DiskNo(1), seg, false).ok());
  }
  EXPECT_LE(SegmentFiles(), 3u);
  EXPECT_EQ(engine_->SegmentUploaded(DiskNo(1), SegNo(12345), false).code(),
            Status::Code::kNotFound);
  ASSERT_TRUE(engine_->CheckInvariants().ok());
  std::string want(65536, static_cast<char>('a' + 39 % 26));
  EXPECT_EQ(*fs->Read(f, 0, 65536), want);
}

TEST_F(SpaceTest, WithATierAnOpenSegmentSealsByAge) {
  Open(true);
  ASSERT_TRUE(engine_->CreateDisk(DiskNo(1), {}).ok());
  ASSERT_TRUE(engine_->SealSegmentsOlderThan(0).ok());  // nothing written: nothing to seal
  EXPECT_TRUE(engine_->SealedSegments()->empty());
  posix::FileSystem* fs = *engine_->Disk(DiskNo(1));
  posix::Ino f = fs->Mknod(posix::kRootIno, "f", S_IFREG | 0644, 0, {})->ino;
  ASSERT_TRUE(fs->Write(f, 0, std::string(4096, 'a')).ok());
  const int64_t age = int64_t{8} * 1'000'000'000;
  clock_.Advance(7'000'000);
  ASSERT_TRUE(engine_->SealSegmentsOlderThan(age).ok());
  EXPECT_TRUE(engine_->SealedSegments()->empty());  // 7 s old: still open
  clock_.Advance(1'000'000);
  ASSERT_TRUE(engine_->SealSegmentsOlderThan(age).ok());
  std::vector<SealedSegment> sealed = *engine_->SealedSegments();
  ASSERT_EQ(sealed.size(), 1u);
  EXPECT_EQ(sealed[0].disk, DiskNo(1));
  EXPECT_EQ(sealed[0].root, DiskNo(1));
  EXPECT_EQ(sealed[0].sealed_ns, clock_.NowMicros() * 1000);
  // The next write opens a new segment; both blocks read back, before and after a restart.
  ASSERT_TRUE(fs->Write(f, 4096, std::string(4096, 'b')).ok());
  ASSERT_TRUE(engine_->SealSegmentsOlderThan(age).ok());  // the new one is young
  EXPECT_EQ(engine_->SealedSegments()->size(), 1u);
  EXPECT_EQ(SegmentFiles(), 2u);
  const std::string want = std::string(4096, 'a') + std::string(4096, 'b');
  EXPECT_EQ(*fs->Read(f, 0, 8192), want);
  ASSERT_TRUE(engine_->CheckInvariants().ok());
  Open(true);
  fs = *engine_->Disk(DiskNo(1));
  EXPECT_EQ(*fs->Read(f, 0, 8192), want);
  // The first survives the restart as it was; the second was left open, and is sealed now.
  EXPECT_EQ(engine_->SealedSegments()->size(), 2u);
  ASSERT_TRUE(engine_->CheckInvariants().ok());
}

TEST_F(SpaceTest, ASegmentSealedByAgeWithNothingLiveDiesOnceUploaded) {
  Open(true);
  ASSERT_TRUE(engine_->CreateDisk(DiskNo(1), {}).ok());
  posix::FileSystem* fs = *engine_->Disk(DiskNo(1));
  posix::Ino f = fs->Mknod(posix::kRootIno, "f", S_IFREG | 0644, 0, {})->ino;
  ASSERT_TRUE(fs->Write(f, 0, std::string(4096, 'a')).ok());
  ASSERT_TRUE(fs->Unlink(posix::kRootIno, "f").ok());
  ASSERT_TRUE(engine_->SealSegmentsOlderThan(0).ok());
  std::vector<SealedSegment> sealed = *engine_->SealedSegments();
  ASSERT_EQ(sealed.size(), 1u);  // dead, but kept until its upload
  EXPECT_EQ(SegmentFiles(), 1u);
  ASSERT_TRUE(engine_->SegmentUploaded(DiskNo(1), sealed[0].seg, true).ok());
  EXPECT_EQ(SegmentFiles(), 0u);
  ASSERT_TRUE(engine_->CheckInvariants().ok());
}

}  // namespace
}  // namespace archil::engine

namespace archil::engine {
namespace {

// A full disk: writes fail with ENOSPC, nothing acknowledged is lost, deletes still work, and
// writes work again once space returns.
TEST_F(SpaceTest, AFullDiskRefusesWritesButNotDeletes) {
  Open(false);
  ASSERT_TRUE(engine_->CreateDisk(DiskNo(1), {}).ok());
  posix::FileSystem* fs = *engine_->Disk(DiskNo(1));
  env_.SetCapacity(env_.used_bytes() + (6 << 20));  // 5 MiB above the 1 MiB reserve
  std::vector<std::string> written;
  Status full;
  for (int i = 0; i < 200 && full.ok(); ++i) {
    std::string name = "f" + std::to_string(i);
    Result<posix::Attr> f = fs->Mknod(posix::kRootIno, name, S_IFREG | 0644, 0, {});
    if (!f.ok()) {
      full = f.status();
      break;
    }
    full = fs->Write(f->ino, 0, std::string(256 << 10, static_cast<char>('a' + i % 26))).status();
    if (full.ok()) written.push_back(name);
  }
  ASSERT_EQ(ErrnoFor(full), ENOSPC) << full.ToString();
  ASSERT_GE(written.size(), 5u);
  posix::StatFs st = *fs->Statfs();
  EXPECT_LT(st.blocks_free, 64u);
  for (size_t i = 0; i < written.size(); ++i) {
    posix::Attr a = *fs->Lookup(posix::kRootIno, written[i]);
    EXPECT_EQ(*fs->Read(a.ino, 0, 256 << 10),
              std::string(256 << 10, static_cast<char>('a' + i % 26)));
  }
  // Deletes work on a full disk and give the space back.
  for (size_t i = 0; i + 1 < written.size(); ++i) {
    ASSERT_TRUE(fs->Unlink(posix::kRootIno, written[i]).ok()) << i;
  }
  ASSERT_TRUE(engine_->SyncIntents().ok());
  Result<posix::Attr> again = fs->Mknod(posix::kRootIno, "again", S_IFREG | 0644, 0, {});
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  Status w = fs->Write(again->ino, 0, std::string(256 << 10, 'z')).status();
  ASSERT_TRUE(w.ok()) << w.ToString();
  ASSERT_TRUE(engine_->CheckInvariants().ok());
  Open(false);
  fs = *engine_->Disk(DiskNo(1));
  EXPECT_EQ(*fs->Read(fs->Lookup(posix::kRootIno, "again")->ino, 0, 3), "zzz");
}

}  // namespace
}  // namespace archil::engine

namespace archil::engine {
namespace {

// Billing: a checkpoint's unique bytes are what only it holds; a branch's stored bytes are what it
// adds to its parent.
TEST_F(SpaceTest, CheckpointsAndBranchesAreChargedForWhatTheyAdd) {
  Open(false);
  ASSERT_TRUE(engine_->CreateDisk(DiskNo(1), {}).ok());
  posix::FileSystem* fs = *engine_->Disk(DiskNo(1));
  posix::Ino f = fs->Mknod(posix::kRootIno, "f", S_IFREG | 0644, 0, {})->ino;
  ASSERT_TRUE(fs->Write(f, 0, std::string(1 << 20, 'a')).ok());
  EXPECT_EQ(*engine_->StoredBytes(DiskNo(1)), uint64_t{1} << 20);
  ASSERT_TRUE(engine_->Checkpoint(DiskNo(1), "cp").ok());
  EXPECT_EQ(*engine_->CheckpointUniqueBytes(DiskNo(1), "cp"), 0u);  // the head holds it all
  ASSERT_TRUE(fs->Write(f, 0, std::string(256 << 10, 'b')).ok());
  EXPECT_EQ(*engine_->CheckpointUniqueBytes(DiskNo(1), "cp"), uint64_t{256} << 10);
  EXPECT_EQ(*engine_->StoredBytes(DiskNo(1)), (uint64_t{1} << 20) + (256 << 10));

  ASSERT_TRUE(engine_->CreateBranch(DiskNo(1), "cp", DiskNo(2), "b").ok());
  EXPECT_EQ(*engine_->StoredBytes(DiskNo(2)), 0u);
  posix::FileSystem* b = *engine_->Disk(DiskNo(2));
  ASSERT_TRUE(b->Write(f, 40960, std::string(40960, 'c')).ok());
  EXPECT_EQ(*engine_->StoredBytes(DiskNo(2)), 40960u);
  // The branch still reads the checkpoint's blocks: deleting the checkpoint frees nothing yet.
  ASSERT_TRUE(engine_->DeleteCheckpoint(DiskNo(1), "cp").ok());
  EXPECT_EQ(*engine_->StoredBytes(DiskNo(1)), (uint64_t{1} << 20) + (256 << 10));
  ASSERT_TRUE(engine_->DeleteDisk(DiskNo(2)).ok());
  EXPECT_EQ(*engine_->StoredBytes(DiskNo(1)), uint64_t{1} << 20);
  ASSERT_TRUE(engine_->CheckInvariants().ok());
}

}  // namespace
}  // namespace archil::engine
