// Checkpoints and branches: what each view reads, what deleting frees, and a randomized run of
// every operation on several heads, checkpoints and branches against the reference model.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <memory>
#include <random>

#include "base/test_seed.h"
#include "engine/engine.h"
#include "engine/test_util.h"
#include "io/sim_env.h"
#include "posix/fs_driver.h"
#include "posix/model_fs.h"

namespace archil::engine {
namespace {

using posix::kRootIno;

using testing::Err;

class CheckpointTest : public ::testing::Test {
 protected:
  void SetUp() override { Reopen(); }
  void Reopen() {
    engine_.reset();
    EngineOptions o;
    o.env = &env_;
    o.dir = "/data";
    o.clock = &clock_;
    o.segment_blocks = 64;
    o.intent_sync_ms = 0;
    o.rocks_max_sleep_micros = 0;
    o.block_cache_mb = 8;
    Result<std::unique_ptr<Engine>> e = Engine::Open(o);
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    engine_ = std::move(e).value();
  }
  posix::FileSystem* Disk(uint64_t n) { return *engine_->Disk(DiskNo(n)); }
  uint64_t Keys(uint64_t disk, Cf cf) { return *engine_->CountKeys(DiskNo(disk), cf); }
  posix::Ino File(posix::FileSystem* fs, std::string_view name, std::string_view data) {
    Result<posix::Attr> a = fs->Mknod(kRootIno, name, S_IFREG | 0644, 0, {});
    EXPECT_TRUE(a.ok()) << a.status().ToString();
    EXPECT_TRUE(fs->Write(a->ino, 0, data).ok());
    return a->ino;
  }
  std::string ReadAll(posix::FileSystem* fs, std::string_view name) {
    Result<posix::Attr> a = fs->Lookup(kRootIno, name);
    if (!a.ok()) return "<" + a.status().ToString() + ">";
    return *fs->Read(a->ino, 0, a->size);
  }

  io::SimEnv env_;
  FakeClock clock_;
  std::unique_ptr<Engine> engine_;
};

TEST_F(CheckpointTest, ASnapshotViewSeesOneMomentOfTheHeadAndRefusesChanges) {
  ASSERT_TRUE(engine_->CreateDisk(DiskNo(1), {}).ok());
  posix::FileSystem* fs = Disk(1);
  posix::Ino f = File(fs, "f", std::string(100000, 'a'));
  ASSERT_TRUE(fs->SetXattr(f, "user.k", "v1", 0).ok());
  Result<std::shared_ptr<DiskFs>> view = engine_->OpenSnapshot(DiskNo(1));
  ASSERT_TRUE(view.ok()) << view.status().ToString();
  DiskFs* v = view->get();
  EXPECT_TRUE(v->read_only());
  // The head changes: an overwrite, a new file, a removed xattr.
  ASSERT_TRUE(fs->Write(f, 0, std::string(4096, 'b')).ok());
  File(fs, "g", "new");
  ASSERT_TRUE(fs->RemoveXattr(f, "user.k").ok());
  EXPECT_EQ(ReadAll(fs, "f").substr(0, 1), "b");
  EXPECT_EQ(ReadAll(v, "f"), std::string(100000, 'a'));
  EXPECT_EQ(Err(v->Lookup(kRootIno, "g")), ENOENT);
  EXPECT_EQ(*v->GetXattr(f, "user.k"), "v1");
  Result<posix::DirPage> page = v->ReadDir(kRootIno, 0, 100);
  ASSERT_TRUE(page.ok());
  size_t named = 0;
  for (const posix::DirEntry& e : page->entries) named += e.name != "." && e.name != "..";
  EXPECT_EQ(named, 1u);
  EXPECT_EQ(Err(v->Write(f, 0, "x")), EROFS);
  EXPECT_EQ(Err(v->Mknod(kRootIno, "h", S_IFREG | 0644, 0, {})), EROFS);
  EXPECT_EQ(Err(v->Unlink(kRootIno, "f")), EROFS);
  EXPECT_EQ(Err(engine_->OpenSnapshot(DiskNo(9))), ENOENT);
  // A later snapshot sees the later head.
  Result<std::shared_ptr<DiskFs>> later = engine_->OpenSnapshot(DiskNo(1));
  ASSERT_TRUE(later.ok());
  EXPECT_TRUE(later->get()->Lookup(kRootIno, "g").ok());
}

TEST_F(CheckpointTest, ACheckpointNeverChanges) {
  ASSERT_TRUE(engine_->CreateDisk(DiskNo(1), {}).ok());
  posix::FileSystem* fs = Disk(1);
  posix::Ino f = File(fs, "f", std::string(100000, 'a'));
  ASSERT_TRUE(fs->SetXattr(f, "user.k", "v1", 0).ok());
  ASSERT_TRUE(fs->Mkdir(kRootIno, "d", 0755, {}).ok());
  ASSERT_EQ(*engine_->Checkpoint(DiskNo(1), "one"), Epoch(1));
  EXPECT_EQ(Err(engine_->Checkpoint(DiskNo(1), "one")), EEXIST);
  EXPECT_EQ(engine_->Checkpoint(DiskNo(1), "bad/name").status().code(),
            Status::Code::kInvalidArgument);

  // Change everything the checkpoint saw.
  ASSERT_TRUE(fs->Write(f, 4096, std::string(5000, 'b')).ok());
  ASSERT_TRUE(fs->SetXattr(f, "user.k", "v2", 0).ok());
  ASSERT_TRUE(fs->Rename(kRootIno, "d", kRootIno, "e", 0).ok());
  File(fs, "new", "later");
  ASSERT_TRUE(fs->Unlink(kRootIno, "f").ok());

  auto check = [&] {
    std::shared_ptr<posix::FileSystem> cp = *engine_->OpenCheckpoint(DiskNo(1), "one");
    EXPECT_EQ(ReadAll(cp.get(), "f"), std::string(100000, 'a'));
    EXPECT_EQ(*cp->GetXattr(f, "user.k"), "v1");
    EXPECT_TRUE(cp->Lookup(kRootIno, "d").ok());
    EXPECT_EQ(Err(cp->Lookup(kRootIno, "e")), ENOENT);
    EXPECT_EQ(Err(cp->Lookup(kRootIno, "new")), ENOENT);
    posix::DirPage page = *cp->ReadDir(kRootIno, 0, 100);
    ASSERT_EQ(page.entries.size(), 2u);
    EXPECT_EQ(Err(cp->Write(f, 0, "x")), EROFS);
    EXPECT_EQ(Err(cp->Mkdir(kRootIno, "z", 0755, {})), EROFS);
  };
  check();
  EXPECT_EQ(ReadAll(fs, "new"), "later");
  EXPECT_EQ(Err(fs->Lookup(kRootIno, "f")), ENOENT);
  Reopen();
  check();
  ASSERT_EQ(engine_->Checkpoints(DiskNo(1))->size(), 1u);

  // Deleting it frees every version only it kept.
  EXPECT_GT(Keys(1, Cf::kHist), 0u);
  EXPECT_GT(Keys(1, Cf::kDead), 0u);
  ASSERT_TRUE(engine_->DeleteCheckpoint(DiskNo(1), "one").ok());
  EXPECT_EQ(Keys(1, Cf::kHist), 0u);
  EXPECT_EQ(Keys(1, Cf::kDead), 0u);
  EXPECT_EQ(engine_->OpenCheckpoint(DiskNo(1), "one").status().code(), Status::Code::kNotFound);
  EXPECT_EQ(ReadAll(Disk(1), "new"), "later");
}

TEST_F(CheckpointTest, WithoutCheckpointsNoHistoryIsKept) {
  ASSERT_TRUE(engine_->CreateDisk(DiskNo(1), {}).ok());
  posix::FileSystem* fs = Disk(1);
  posix::Ino f = File(fs, "f", "one");
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(fs->Write(f, 0, std::to_string(i)).ok());
  ASSERT_TRUE(fs->Unlink(kRootIno, "f").ok());
  EXPECT_EQ(Keys(1, Cf::kHist), 0u);
  EXPECT_EQ(Keys(1, Cf::kDead), 0u);
}

// Only what a checkpoint saw and the head no longer has is kept; deleting the middle one of
// three frees exactly what it alone saw.
TEST_F(CheckpointTest, DeletingTheMiddleCheckpointKeepsItsNeighbours) {
  ASSERT_TRUE(engine_->CreateDisk(DiskNo(1), {}).ok());
  posix::FileSystem* fs = Disk(1);
  posix::Ino f = File(fs, "f", "v1");
  ASSERT_TRUE(engine_->Checkpoint(DiskNo(1), "a").ok());
  ASSERT_TRUE(fs->Write(f, 0, "v2").ok());
  ASSERT_TRUE(engine_->Checkpoint(DiskNo(1), "b").ok());
  ASSERT_TRUE(fs->Write(f, 0, "v3").ok());
  ASSERT_TRUE(engine_->Checkpoint(DiskNo(1), "c").ok());
  ASSERT_TRUE(fs->Write(f, 0, "v4").ok());
  const uint64_t before = Keys(1, Cf::kHist);
  ASSERT_TRUE(engine_->DeleteCheckpoint(DiskNo(1), "b").ok());
  EXPECT_LT(Keys(1, Cf::kHist), before);
  EXPECT_EQ(ReadAll(engine_->OpenCheckpoint(DiskNo(1), "a")->get(), "f"), "v1");
  EXPECT_EQ(ReadAll(engine_->OpenCheckpoint(DiskNo(1), "c")->get(), "f"), "v3");
  EXPECT_EQ(ReadAll(fs, "f"), "v4");
  ASSERT_TRUE(engine_->DeleteCheckpoint(DiskNo(1), "a").ok());
  ASSERT_TRUE(engine_->DeleteCheckpoint(DiskNo(1), "c").ok());
  EXPECT_EQ(Keys(1, Cf::kHist), 0u);
  EXPECT_EQ(Keys(1, Cf::kDead), 0u);
}

TEST_F(CheckpointTest, BranchesAreIsolatedFromTheirParentAndEachOther) {
  ASSERT_TRUE(engine_->CreateDisk(DiskNo(1), {}).ok());
  posix::FileSystem* p = Disk(1);
  File(p, "shared", std::string(300000, 's'));
  ASSERT_TRUE(p->Mkdir(kRootIno, "dir", 0755, {}).ok());
  ASSERT_TRUE(engine_->Checkpoint(DiskNo(1), "base").ok());
  ASSERT_TRUE(engine_->CreateBranch(DiskNo(1), "base", DiskNo(2), "b1").ok());
  ASSERT_TRUE(engine_->CreateBranch(DiskNo(1), "base", DiskNo(3), "b2").ok());
  EXPECT_EQ(Err(engine_->CreateBranch(DiskNo(1), "base", DiskNo(4), "b1")), EEXIST);
  EXPECT_EQ(engine_->CreateBranch(DiskNo(1), "nope", DiskNo(4), "b4").code(),
            Status::Code::kNotFound);
  posix::FileSystem* b1 = Disk(2);
  posix::FileSystem* b2 = Disk(3);
  EXPECT_EQ(ReadAll(b1, "shared"), std::string(300000, 's'));

  posix::Ino s1 = b1->Lookup(kRootIno, "shared")->ino;
  ASSERT_TRUE(b1->Write(s1, 8192, "branch one").ok());
  File(b1, "only-b1", "1");
  ASSERT_TRUE(b2->Unlink(kRootIno, "shared").ok());
  ASSERT_TRUE(b2->Rmdir(kRootIno, "dir").ok());
  posix::Ino ps = p->Lookup(kRootIno, "shared")->ino;
  ASSERT_TRUE(p->Write(ps, 0, "parent").ok());

  std::string want_b1(300000, 's');
  want_b1.replace(8192, 10, "branch one");
  std::string want_p(300000, 's');
  want_p.replace(0, 6, "parent");
  auto check = [&] {
    posix::FileSystem* p = Disk(1);
    posix::FileSystem* b1 = Disk(2);
    posix::FileSystem* b2 = Disk(3);
    EXPECT_EQ(ReadAll(p, "shared"), want_p);
    EXPECT_EQ(ReadAll(b1, "shared"), want_b1);
    EXPECT_EQ(Err(b2->Lookup(kRootIno, "shared")), ENOENT);
    EXPECT_EQ(Err(b2->Lookup(kRootIno, "dir")), ENOENT);
    EXPECT_TRUE(b1->Lookup(kRootIno, "dir").ok());
    EXPECT_EQ(Err(p->Lookup(kRootIno, "only-b1")), ENOENT);
    EXPECT_EQ(b2->ReadDir(kRootIno, 0, 100)->entries.size(), 0u);
    EXPECT_EQ(b1->ReadDir(kRootIno, 0, 100)->entries.size(), 3u);
    // New inodes of a branch are numbered in its own space.
    EXPECT_NE(b1->Lookup(kRootIno, "only-b1")->ino.value() >> 40, 0u);
  };
  check();
  Reopen();
  check();

  // A branch of a branch; then the middle one is deleted: it hides until its branch goes.
  ASSERT_TRUE(engine_->Checkpoint(DiskNo(2), "mid").ok());
  ASSERT_TRUE(engine_->CreateBranch(DiskNo(2), "mid", DiskNo(5), "b1-child").ok());
  ASSERT_TRUE(engine_->DeleteDisk(DiskNo(2)).ok());
  EXPECT_EQ(engine_->Disk(DiskNo(2)).status().code(), Status::Code::kNotFound);
  EXPECT_EQ(ReadAll(Disk(5), "shared"), want_b1);
  Reopen();
  EXPECT_EQ(ReadAll(Disk(5), "shared"), want_b1);
  EXPECT_EQ(engine_->ListDisks(), (std::vector<DiskNo>{DiskNo(1), DiskNo(3), DiskNo(5)}));
  ASSERT_TRUE(engine_->DeleteDisk(DiskNo(5)).ok());
  ASSERT_TRUE(engine_->WaitForPurges().ok());
  EXPECT_EQ(Keys(2, Cf::kMeta), 0u);  // the hidden parent went with its last branch
  EXPECT_EQ(Keys(2, Cf::kChunk), 0u);
  ASSERT_TRUE(engine_->DeleteDisk(DiskNo(3)).ok());
  // The base checkpoint is no longer pinned by a branch: deleting it frees all history.
  ASSERT_TRUE(engine_->DeleteCheckpoint(DiskNo(1), "base").ok());
  EXPECT_EQ(Keys(1, Cf::kHist), 0u);
  EXPECT_EQ(Keys(1, Cf::kDead), 0u);
  EXPECT_EQ(ReadAll(Disk(1), "shared"), want_p);
}

// A checkpoint deleted while a branch still depends on it keeps what the branch reads.
TEST_F(CheckpointTest, ABranchKeepsItsCheckpointAlive) {
  ASSERT_TRUE(engine_->CreateDisk(DiskNo(1), {}).ok());
  posix::FileSystem* p = Disk(1);
  posix::Ino f = File(p, "f", "before");
  ASSERT_TRUE(engine_->Checkpoint(DiskNo(1), "cp").ok());
  ASSERT_TRUE(engine_->CreateBranch(DiskNo(1), "cp", DiskNo(2), "b").ok());
  ASSERT_TRUE(engine_->DeleteCheckpoint(DiskNo(1), "cp").ok());
  ASSERT_TRUE(p->Write(f, 0, "after!").ok());
  ASSERT_TRUE(p->Unlink(kRootIno, "f").ok());
  EXPECT_EQ(ReadAll(Disk(2), "f"), "before");
  Reopen();
  EXPECT_EQ(ReadAll(Disk(2), "f"), "before");
  ASSERT_TRUE(engine_->DeleteDisk(DiskNo(2)).ok());
  EXPECT_EQ(Keys(1, Cf::kHist), 0u);
  EXPECT_EQ(Keys(1, Cf::kDead), 0u);
}

// A retried create with the same Idempotency-Key gets the first branch, across a restart; the key
// reused for another request is refused; the lineage lists every branch, a hidden one marked.
TEST_F(CheckpointTest, BranchRetriesWithTheSameKeyGetTheSameBranch) {
  ASSERT_TRUE(engine_->CreateDisk(DiskNo(1), {}).ok());
  ASSERT_TRUE(engine_->Checkpoint(DiskNo(1), "cp").ok());
  BranchRequest req{DiskNo(1), "cp", DiskNo(2), "b1", "key-1"};
  Result<BranchCreated> first = engine_->CreateBranch(req);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_TRUE(first->created);
  EXPECT_EQ(first->branch.disk, DiskNo(2));
  Reopen();
  req.child = DiskNo(3);  // a retry makes up a new disk id; it must not be used
  Result<BranchCreated> retry = engine_->CreateBranch(req);
  ASSERT_TRUE(retry.ok()) << retry.status().ToString();
  EXPECT_FALSE(retry->created);
  EXPECT_EQ(retry->branch.disk, DiskNo(2));
  EXPECT_EQ(retry->branch.name, "b1");
  EXPECT_EQ(Err(engine_->Disk(DiskNo(3)).status()), ENOENT);
  req.name = "b2";  // the same key for another branch
  EXPECT_EQ(Err(engine_->CreateBranch(req).status()), EEXIST);
  // Without a key, a second branch of the same name is refused.
  EXPECT_EQ(Err(engine_->CreateBranch(DiskNo(1), "cp", DiskNo(3), "b1")), EEXIST);

  // A branch of the branch: the lineage lists both, from any of its disks.
  ASSERT_TRUE(engine_->Checkpoint(DiskNo(2), "cp2").ok());
  ASSERT_TRUE(engine_->CreateBranch(DiskNo(2), "cp2", DiskNo(4), "b1-child").ok());
  for (uint64_t d : {1, 2, 4}) {
    Result<std::vector<BranchInfo>> all = engine_->Branches(DiskNo(d));
    ASSERT_TRUE(all.ok());
    ASSERT_EQ(all->size(), 2u);
    EXPECT_EQ((*all)[0].name, "b1");
    EXPECT_EQ((*all)[0].idempotency_key, "key-1");
    EXPECT_EQ((*all)[1].name, "b1-child");
    EXPECT_EQ((*all)[1].parent, DiskNo(2));
    EXPECT_EQ((*all)[1].from_checkpoint, "cp2");
  }
  Result<LineageInfo> l = engine_->Lineage(DiskNo(4));
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->root, DiskNo(1));
  EXPECT_EQ(l->parent, DiskNo(2));
  EXPECT_FALSE(l->hidden);
  // The middle disk deleted: hidden, still listed as such, its child still reads through it.
  ASSERT_TRUE(engine_->DeleteDisk(DiskNo(2)).ok());
  EXPECT_TRUE(engine_->Lineage(DiskNo(2))->hidden);
  EXPECT_TRUE((*engine_->Branches(DiskNo(1)))[0].hidden);
  EXPECT_TRUE(engine_->Disk(DiskNo(4)).ok());
  // The last branch goes, and the hidden disk with it; the root stays.
  ASSERT_TRUE(engine_->DeleteDisk(DiskNo(4)).ok());
  EXPECT_EQ(Err(engine_->Lineage(DiskNo(2)).status()), ENOENT);
  EXPECT_TRUE(engine_->Branches(DiskNo(1))->empty());
  EXPECT_TRUE(engine_->Lineage(DiskNo(1)).ok());
}

// Random operations on several heads (a disk and its branches), with checkpoints taken, read
// back and deleted and branches made and deleted along the way; every view is compared with the
// model's copy of it, also after a restart.
TEST_F(CheckpointTest, EveryViewAgreesWithTheModel) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE("seed " + std::to_string(seed) +
               " (replay: ARCHIL_TEST_SEED=" + std::to_string(seed) + ")");
  std::mt19937_64 rng(seed);
  posix::FsOpGenerator gen(seed);
  struct Head {
    DiskNo disk;
    std::shared_ptr<posix::ModelFs> model;
    std::vector<posix::Ino> he, hm;
  };
  struct Ckpt {
    DiskNo disk;
    std::string name;
    std::shared_ptr<posix::ModelFs> model;
  };
  std::vector<Head> heads;
  std::vector<Ckpt> ckpts;
  ASSERT_TRUE(engine_->CreateDisk(DiskNo(1), {}).ok());
  heads.push_back({DiskNo(1), std::make_shared<posix::ModelFs>(&clock_), {}, {}});
  uint64_t next_disk = 2;
  std::map<uint64_t, uint64_t> parent_of;  // branch disk -> parent disk
  auto compare_all = [&](const std::string& when) {
    Status inv = engine_->CheckInvariants();
    ASSERT_TRUE(inv.ok()) << when << ": " << inv.message();
    for (Head& h : heads) {
      Status same = posix::CompareTrees(h.model.get(), *engine_->Disk(h.disk), {.times = true});
      ASSERT_TRUE(same.ok()) << when << ": disk " << h.disk.value() << ": " << same.message();
    }
    for (Ckpt& c : ckpts) {
      Result<std::shared_ptr<posix::FileSystem>> view = engine_->OpenCheckpoint(c.disk, c.name);
      ASSERT_TRUE(view.ok()) << view.status().ToString();
      Status same = posix::CompareTrees(c.model.get(), view->get(), {.times = true});
      ASSERT_TRUE(same.ok()) << when << ": checkpoint " << c.name << " of disk " << c.disk.value()
                             << ": " << same.message();
    }
  };
  const int kOps = SanitizerScaled(2500);
  for (int i = 0; i < kOps; ++i) {
    const int dice = static_cast<int>(rng() % 1000);
    Head& h = heads[rng() % heads.size()];
    if (dice < 25) {
      std::string name = "c" + std::to_string(i);
      ASSERT_TRUE(engine_->Checkpoint(h.disk, name).ok()) << "op " << i;
      ckpts.push_back({h.disk, name, std::make_shared<posix::ModelFs>(*h.model)});
    } else if (dice < 40 && !ckpts.empty()) {
      size_t k = rng() % ckpts.size();
      ASSERT_TRUE(engine_->DeleteCheckpoint(ckpts[k].disk, ckpts[k].name).ok()) << "op " << i;
      ckpts.erase(ckpts.begin() + static_cast<ptrdiff_t>(k));
    } else if (dice < 55 && !ckpts.empty() && heads.size() < 6) {
      const Ckpt& c = ckpts[rng() % ckpts.size()];
      DiskNo child(next_disk++);
      ASSERT_TRUE(engine_->CreateBranch(c.disk, c.name, child, "b" + std::to_string(i)).ok())
          << "op " << i;
      parent_of[child.value()] = c.disk.value();
      heads.push_back({child, std::make_shared<posix::ModelFs>(*c.model), {}, {}});
    } else if (dice < 62 && heads.size() > 1) {
      // Delete a branch that has no branches of its own, with its checkpoints.
      size_t k = 1 + rng() % (heads.size() - 1);
      DiskNo d = heads[k].disk;
      bool parent = false;
      for (auto& [child, par] : parent_of) parent |= par == d.value();
      if (parent) continue;
      ASSERT_TRUE(engine_->DeleteDisk(d).ok()) << "op " << i;
      std::erase_if(ckpts, [&](const Ckpt& c) { return c.disk == d; });
      heads.erase(heads.begin() + static_cast<ptrdiff_t>(k));
      parent_of.erase(d.value());
    } else {
      posix::FileSystem* fs = *engine_->Disk(h.disk);
      posix::FsOp op = gen.Next(h.model.get(), h.hm.size());
      posix::FsOutcome want = posix::Apply(h.model.get(), op, &h.hm);
      posix::FsOutcome got = posix::Apply(fs, op, &h.he);
      ASSERT_EQ(got.err, want.err)
          << "op " << i << " on disk " << h.disk.value() << ": " << posix::Describe(op);
      ASSERT_TRUE(got.data == want.data) << "op " << i << ": " << posix::Describe(op);
    }
    clock_.Advance(7);
    if (i % 250 == 249) {
      ASSERT_TRUE(engine_->SyncIntents().ok());
      compare_all("after op " + std::to_string(i));
    }
  }
  compare_all("at the end");
  Reopen();
  for (Head& h : heads) {
    ASSERT_TRUE((*engine_->Disk(h.disk))->DropHolder(posix::HolderId(1)).ok());
    ASSERT_TRUE(h.model->DropHolder(posix::HolderId(1)).ok());
  }
  compare_all("after a restart");
  // Deleting every checkpoint and branch leaves no history behind.
  for (Ckpt& c : ckpts) ASSERT_TRUE(engine_->DeleteCheckpoint(c.disk, c.name).ok());
  while (heads.size() > 1) {
    for (size_t k = heads.size(); k-- > 1;) {
      DiskNo d = heads[k].disk;
      bool parent = false;
      for (auto& [child, par] : parent_of) parent |= par == d.value();
      if (parent) continue;
      ASSERT_TRUE(engine_->DeleteDisk(d).ok());
      parent_of.erase(d.value());
      heads.erase(heads.begin() + static_cast<ptrdiff_t>(k));
    }
  }
  EXPECT_EQ(Keys(1, Cf::kHist), 0u);
  EXPECT_EQ(Keys(1, Cf::kDead), 0u);
}

}  // namespace
}  // namespace archil::engine
