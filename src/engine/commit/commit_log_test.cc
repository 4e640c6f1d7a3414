// The commit log: the codec of log records, and physical completeness: an empty engine that
// applies another engine's outbox (with its segment files) holds the same disks, checkpoints and
// branches, byte for byte and time for time.
#include "engine/commit/commit_log.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "base/test_seed.h"
#include "engine/engine.h"
#include "engine/random_workload_test_util.h"
#include "engine/records/keys.h"
#include "engine/records/log_record.h"

namespace archil::engine {
namespace {

LogRecord Sample() {
  LogRecord r;
  r.flags = kLogFlagEpochBump;
  r.seq = Seq(7);
  r.epoch = Epoch(3);
  r.commit_ns = 1234567890123;
  r.segrefs = {{DiskNo(1), SegNo(0x100000002)}};
  r.depends_on = {{DiskNo(9), Seq(41)}};
  r.mutations = {{LogOp::kPut, Cf::kInode, InodeKey(DiskNo(1), kRootIno), "value"},
                 {LogOp::kDelete, Cf::kDentry, std::string(8, '\0') + "x", ""},
                 {LogOp::kMerge, Cf::kSegUsage, SegUsageKey(DiskNo(1), SegNo(2)), "op"}};
  r.mutations[1].key[7] = 1;  // disk 1
  return r;
}

TEST(LogRecordTest, RoundTrips) {
  LogRecord r = Sample();
  Result<LogRecord> back = DecodeLogRecord(EncodeLogRecord(r), DiskNo(1));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, r);
}

TEST(LogRecordTest, RefusesWhatIsNotARecordOfThisDisk) {
  const std::string good = EncodeLogRecord(Sample());
  EXPECT_EQ(DecodeLogRecord(good, DiskNo(2)).status().code(), Status::Code::kCorruption);
  for (size_t n = 0; n < good.size(); ++n) {
    EXPECT_FALSE(DecodeLogRecord(good.substr(0, n), DiskNo(1)).ok()) << "truncated to " << n;
  }
  EXPECT_FALSE(DecodeLogRecord(good + "x", DiskNo(1)).ok());
  std::string bad_fmt = good;
  bad_fmt[0] = 2;
  EXPECT_FALSE(DecodeLogRecord(bad_fmt, DiskNo(1)).ok());
  LogRecord local = Sample();
  local.mutations.push_back({LogOp::kPut, Cf::kMeta, MetaKey(DiskNo(1), MetaType::kLocal), "l"});
  EXPECT_FALSE(DecodeLogRecord(EncodeLogRecord(local), DiskNo(1)).ok());
  LogRecord intent = Sample();
  intent.mutations.push_back({LogOp::kPut, Cf::kIntent, SegUsageKey(DiskNo(1), SegNo(2)), "i"});
  EXPECT_FALSE(DecodeLogRecord(EncodeLogRecord(intent), DiskNo(1)).ok());
  // A count of mutations the bytes cannot hold is refused before anything is allocated.
  std::string huge = good;
  huge[4] = huge[5] = huge[6] = huge[7] = '\xff';
  EXPECT_FALSE(DecodeLogRecord(huge, DiskNo(1)).ok());
}

TEST(LoggedKeyTest, WhatIsLogged) {
  EXPECT_TRUE(LoggedKey(Cf::kMeta, MetaKey(DiskNo(1), MetaType::kCounters)));
  EXPECT_FALSE(LoggedKey(Cf::kMeta, MetaKey(DiskNo(1), MetaType::kLocal)));
  EXPECT_TRUE(LoggedKey(Cf::kChunk, std::string(16, 'a')));
  for (Cf cf : {Cf::kDefault, Cf::kIntent, Cf::kOutbox, Cf::kSession}) {
    EXPECT_FALSE(LoggedCf(cf));
  }
}

class CommitLogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/archil-commit-log-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    root_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(root_); }
  std::unique_ptr<Engine> Open(const std::string& name, bool logged) {
    Result<std::unique_ptr<Engine>> e =
        Engine::Open(TestEngineOptions(root_ + "/" + name, &clock_, logged));
    EXPECT_TRUE(e.ok()) << e.status().ToString();
    return e.ok() ? std::move(e).value() : nullptr;
  }
  // Every record of `disk`'s outbox, checking that seqs run 1, 2, 3...
  std::vector<std::string> Log(Engine* e, DiskNo disk) {
    std::vector<std::string> out;
    Seq after;
    for (;;) {
      Result<std::vector<std::pair<Seq, std::string>>> page = e->OutboxRecords(disk, after, 100);
      EXPECT_TRUE(page.ok());
      if (!page.ok() || page->empty()) return out;
      for (auto& [seq, rec] : *page) {
        EXPECT_EQ(seq.value(), after.value() + 1);
        after = seq;
        out.push_back(std::move(rec));
      }
    }
  }
  std::string root_;
  FakeClock clock_;
};

TEST_F(CommitLogTest, WithoutLogCommitsTheOutboxStaysEmpty) {
  std::unique_ptr<Engine> e = Open("a", false);
  ASSERT_TRUE(e->CreateDisk(DiskNo(1), {}).ok());
  ASSERT_TRUE((*e->Disk(DiskNo(1)))->Mkdir(posix::kRootIno, "d", 0755, {}).ok());
  EXPECT_TRUE(Log(e.get(), DiskNo(1)).empty());
}

TEST_F(CommitLogTest, ARecordPerCommitNumberedFromOneWithItsSegments) {
  std::unique_ptr<Engine> e = Open("a", true);
  ASSERT_TRUE(e->CreateDisk(DiskNo(1), {}).ok());
  posix::FileSystem* fs = *e->Disk(DiskNo(1));
  posix::Ino f = fs->Mknod(posix::kRootIno, "f", 0100644, 0, {})->ino;
  ASSERT_TRUE(fs->Write(f, 0, std::string(8192, 'x')).ok());
  std::vector<std::string> log = Log(e.get(), DiskNo(1));
  ASSERT_GE(log.size(), 3u);  // create disk, mknod, write
  Result<LogRecord> write = DecodeLogRecord(log.back(), DiskNo(1));
  ASSERT_TRUE(write.ok());
  EXPECT_EQ(write->seq, Seq(log.size()));
  ASSERT_EQ(write->segrefs.size(), 1u);
  EXPECT_EQ(write->segrefs[0].first, DiskNo(1));
  EXPECT_EQ(write->epoch, Epoch(1));
  EXPECT_EQ(write->commit_ns, clock_.NowMicros() * 1000);
  // Its last mutation advances the counter its seq came from.
  EXPECT_EQ(write->mutations.back().key, MetaKey(DiskNo(1), MetaType::kCounters));
  Result<LogRecord> mknod = DecodeLogRecord(log[log.size() - 2], DiskNo(1));
  ASSERT_TRUE(mknod.ok());
  EXPECT_TRUE(mknod->segrefs.empty());
}

TEST_F(CommitLogTest, ABranchsFirstRecordDependsOnItsParentsLogUpToTheFork) {
  std::unique_ptr<Engine> e = Open("a", true);
  ASSERT_TRUE(e->CreateDisk(DiskNo(1), {}).ok());
  ASSERT_TRUE((*e->Disk(DiskNo(1)))->Mkdir(posix::kRootIno, "d", 0755, {}).ok());
  ASSERT_TRUE(e->Checkpoint(DiskNo(1), "c").ok());
  ASSERT_TRUE(e->CreateBranch(DiskNo(1), "c", DiskNo(7), "b").ok());
  // The branch's creation also logs the root's BRANCH record: the dependency includes it.
  const std::vector<std::string> parent = Log(e.get(), DiskNo(1));
  const std::vector<std::string> child = Log(e.get(), DiskNo(7));
  ASSERT_FALSE(child.empty());
  Result<LogRecord> first = DecodeLogRecord(child.front(), DiskNo(7));
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  ASSERT_EQ(first->depends_on.size(), 1u);
  EXPECT_EQ(first->depends_on[0].first, DiskNo(1));
  EXPECT_EQ(first->depends_on[0].second, Seq(parent.size()));
  // Later records of the branch depend on nothing.
  ASSERT_TRUE((*e->Disk(DiskNo(7)))->Mkdir(posix::kRootIno, "e", 0755, {}).ok());
  EXPECT_TRUE(DecodeLogRecord(Log(e.get(), DiskNo(7)).back(), DiskNo(7))->depends_on.empty());
}

TEST_F(CommitLogTest, AnEmptyEngineThatAppliesTheLogHoldsTheSameDisks) {
  std::unique_ptr<Engine> a = Open("a", true);
  ASSERT_TRUE(a->CreateDisk(DiskNo(1), {}).ok());
  RandomWorkload w(a.get(), &clock_, TestSeed());
  for (int i = 0; i < 400; ++i) ASSERT_TRUE(w.Step().ok());
  // What the tier ships: sealed segments, and every record after the seal.
  ASSERT_TRUE(a->SealSegmentsOlderThan(0).ok());
  std::unique_ptr<Engine> b = Open("b", false);
  for (DiskNo d : w.disks()) {
    std::vector<std::string> log = Log(a.get(), d);
    ASSERT_FALSE(log.empty());
    // Applied in two calls: the second continues the first.
    const size_t half = log.size() / 2;
    ASSERT_TRUE(b->ApplyLogRecords(d, {log.begin(), log.begin() + half}).ok());
    ASSERT_TRUE(b->ApplyLogRecords(d, {log.begin() + half, log.end()}).ok());
    // A gap or a repeat is refused.
    EXPECT_EQ(b->ApplyLogRecords(d, {log.back()}).code(), Status::Code::kCorruption);
  }
  b.reset();
  std::filesystem::copy(
      root_ + "/a/segments", root_ + "/b/segments",
      std::filesystem::copy_options::recursive | std::filesystem::copy_options::overwrite_existing);
  b = Open("b", false);
  ASSERT_NE(b, nullptr);
  Status same = CompareEngines(a.get(), b.get(), w);
  EXPECT_TRUE(same.ok()) << same.ToString();
  EXPECT_TRUE(b->CheckInvariants().ok());
  // Applying to a disk the engine has loaded is refused.
  EXPECT_EQ(b->ApplyLogRecords(DiskNo(1), {}).code(), Status::Code::kFailedPrecondition);
}

}  // namespace
}  // namespace archil::engine
