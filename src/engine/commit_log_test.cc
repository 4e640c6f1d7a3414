// The commit log: the codec of log records, and physical completeness: an empty engine that
// applies another engine's outbox (with its segment files) holds the same disks, checkpoints and
// branches, byte for byte and time for time.
#include "engine/commit_log.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <random>

#include "base/test_seed.h"
#include "engine/engine.h"
#include "engine/keys.h"
#include "engine/log_record.h"
#include "io/posix_env.h"
#include "posix/fs_driver.h"
#include "posix/model_fs.h"

namespace archil::engine {
namespace {

LogRecord Sample() {
  LogRecord r;
  r.flags = kLogFlagEpochBump;
  r.seq = Seq(7);
  r.epoch = Epoch(3);
  r.commit_ns = 1234567890123;
  r.segrefs = {{DiskNo(1), SegNo(0x100000002)}};
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
    EngineOptions o;
    o.env = io::PosixEnv();
    o.dir = root_ + "/" + name;
    o.clock = &clock_;
    o.segment_blocks = 32;
    o.intent_sync_ms = 0;
    o.block_cache_mb = 8;
    o.reserve_bytes = 0;
    o.keep_segments_until_uploaded = logged;
    o.log_commits = logged;
    Result<std::unique_ptr<Engine>> e = Engine::Open(o);
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

TEST_F(CommitLogTest, AnEmptyEngineThatAppliesTheLogHoldsTheSameDisks) {
  const unsigned seed = TestSeed();
  std::mt19937_64 rng(seed);
  std::unique_ptr<Engine> a = Open("a", true);
  ASSERT_TRUE(a->CreateDisk(DiskNo(1), {}).ok());
  std::vector<DiskNo> disks = {DiskNo(1)};
  std::vector<std::pair<DiskNo, std::string>> ckpts;
  std::map<uint64_t, std::vector<posix::Ino>> handles;
  std::map<uint64_t, posix::ModelFs> models;
  models.emplace(1, posix::ModelFs(&clock_));
  posix::FsOpGenerator gen(seed);
  for (int i = 0; i < 400; ++i) {
    const int dice = static_cast<int>(rng() % 100);
    const DiskNo d = disks[rng() % disks.size()];
    if (dice < 3) {
      const std::string name = "c" + std::to_string(i);
      ASSERT_TRUE(a->Checkpoint(d, name).ok());
      ckpts.emplace_back(d, name);
    } else if (dice < 5 && !ckpts.empty()) {
      const size_t k = rng() % ckpts.size();
      ASSERT_TRUE(a->DeleteCheckpoint(ckpts[k].first, ckpts[k].second).ok());
      ckpts.erase(ckpts.begin() + static_cast<ptrdiff_t>(k));
    } else if (dice < 6 && !ckpts.empty() && disks.size() < 3) {
      const auto& [parent, name] = ckpts[rng() % ckpts.size()];
      const DiskNo child(10 + disks.size());
      ASSERT_TRUE(a->CreateBranch(parent, name, child, "b" + std::to_string(i)).ok());
      disks.push_back(child);
    } else {
      // The model only chooses the ops (names that exist); the engines are what is compared.
      posix::FsOp op = gen.Next(*a->Disk(d), handles[d.value()].size());
      (void)posix::Apply(*a->Disk(d), op, &handles[d.value()]);
    }
    clock_.Advance(1000);
  }
  // What the tier ships: sealed segments, and every record after the seal.
  ASSERT_TRUE(a->SealSegmentsOlderThan(0).ok());
  std::unique_ptr<Engine> b = Open("b", false);
  for (DiskNo d : disks) {
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
  EXPECT_EQ(b->ListDisks(), a->ListDisks());
  posix::CompareOptions exact;
  exact.times = true;
  exact.blocks = true;
  for (DiskNo d : disks) {
    ASSERT_TRUE((*a->Disk(d))->DropHolder(posix::HolderId(1)).ok());
    ASSERT_TRUE((*b->Disk(d))->DropHolder(posix::HolderId(1)).ok());
    Status same = posix::CompareTrees(*a->Disk(d), *b->Disk(d), exact);
    EXPECT_TRUE(same.ok()) << "disk " << d.value() << ": " << same.ToString();
  }
  for (const auto& [d, name] : ckpts) {
    Result<std::shared_ptr<posix::FileSystem>> va = a->OpenCheckpoint(d, name);
    Result<std::shared_ptr<posix::FileSystem>> vb = b->OpenCheckpoint(d, name);
    ASSERT_TRUE(va.ok() && vb.ok()) << name;
    Status same = posix::CompareTrees(va->get(), vb->get(), exact);
    EXPECT_TRUE(same.ok()) << "checkpoint " << name << ": " << same.ToString();
  }
  EXPECT_TRUE(b->CheckInvariants().ok());
  // Applying to a disk the engine has loaded is refused.
  EXPECT_EQ(b->ApplyLogRecords(DiskNo(1), {}).code(), Status::Code::kFailedPrecondition);
}

}  // namespace
}  // namespace archil::engine
