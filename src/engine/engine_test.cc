#include "engine/engine.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>

#include "engine/engine_fixture.h"
#include "engine/records/column_families.h"
#include "engine/records/default_records.h"
#include "engine/records/keys.h"
#include "engine/test_util.h"
#include "io/rocksdb_fs.h"
#include "io/sim_env.h"
#include "posix/fs_driver.h"
#include "posix/model_fs.h"

namespace archil::engine {
namespace {

using posix::kRootIno;

uint64_t TestSeed(uint64_t fallback) {
  const char* env = std::getenv("ARCHIL_TEST_SEED");
  return env && *env ? std::strtoull(env, nullptr, 10) : fallback;
}

using testing::Err;

TEST_F(EngineTest, FilesDirectoriesAndDataSurviveAReopen) {
  posix::FileSystem* fs = NewDisk(7);
  Result<posix::Attr> d = fs->Mkdir(kRootIno, "dir", 0750, {1000, 100});
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  Result<posix::Attr> f = fs->Mknod(d->ino, "f", S_IFREG | 0644, 0, {1000, 100});
  ASSERT_TRUE(f.ok());
  std::string big(300 * 1024, 'x');  // past the intent limit: synced in its segment
  ASSERT_TRUE(fs->Write(f->ino, 5, "hello").ok());
  ASSERT_TRUE(fs->Write(f->ino, 1 << 20, big).ok());
  ASSERT_TRUE(fs->SetXattr(f->ino, "user.k", "v", 0).ok());
  ASSERT_TRUE(fs->Symlink(kRootIno, "link", "dir/f", {}).ok());
  EXPECT_EQ(Err(engine_->CreateDisk(DiskNo(7), {})), EEXIST);

  Reopen();
  fs = *engine_->Disk(DiskNo(7));
  Result<posix::Attr> again = fs->Lookup(d->ino, "f");
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->size, (1u << 20) + big.size());
  EXPECT_EQ(again->uid, 1000u);
  EXPECT_EQ(*fs->Read(f->ino, 0, 12), std::string(5, '\0') + "hello" + std::string(2, '\0'));
  EXPECT_EQ(*fs->Read(f->ino, 1 << 20, big.size()), big);
  EXPECT_EQ(*fs->GetXattr(f->ino, "user.k"), "v");
  EXPECT_EQ(*fs->Readlink(fs->Lookup(kRootIno, "link")->ino), "dir/f");
  EXPECT_EQ(fs->GetAttr(kRootIno)->nlink, 3u);
}

// A client's attribute puts (protocol.md §5.3.2) are stored as given, change time included, in
// one commit; a put of an inode that is gone is skipped; the same puts again change nothing; a
// checkpoint's read-only view refuses them; and they survive a reopen.
TEST_F(EngineTest, AttributePutsStoreTheValuesTheClientAnsweredWith) {
  posix::FileSystem* fs = NewDisk(7);
  auto* disk = static_cast<DiskFs*>(fs);
  Result<posix::Attr> f = fs->Mknod(kRootIno, "f", S_IFREG | 04755, 0, {1000, 100});
  Result<posix::Attr> gone = fs->Mknod(kRootIno, "gone", S_IFREG | 0644, 0, {});
  ASSERT_TRUE(f.ok() && gone.ok());
  ASSERT_TRUE(fs->Unlink(kRootIno, "gone").ok());
  const std::vector<posix::AttrPut> puts = {
      {.ino = f->ino, .mode = 0600, .ctime = posix::Timespec{10, 1}},
      {.ino = gone->ino, .mode = 0600, .ctime = posix::Timespec{10, 2}},
      {.ino = f->ino,
       .uid = 0,
       .gid = 0,
       .atime = posix::Timespec{5, 5},
       .mtime = posix::Timespec{6, 6},
       .ctime = posix::Timespec{11, 3}},
  };
  size_t skipped = 99;
  ASSERT_TRUE(disk->ApplyPuts({.attrs = puts}, {}, &skipped).ok());
  EXPECT_EQ(skipped, 1u);
  auto check = [&](posix::FileSystem* on) {
    Result<posix::Attr> a = on->GetAttr(f->ino);
    ASSERT_TRUE(a.ok());
    EXPECT_EQ(a->mode, S_IFREG | 0600);  // the type stays, the set-ID bits go as the put says
    EXPECT_EQ(a->uid, 0u);
    EXPECT_EQ(a->gid, 0u);
    EXPECT_EQ(a->atime, (posix::Timespec{5, 5}));
    EXPECT_EQ(a->mtime, (posix::Timespec{6, 6}));
    EXPECT_EQ(a->ctime, (posix::Timespec{11, 3})) << "the client's change time, not the server's";
    EXPECT_EQ(a->size, f->size);
    EXPECT_EQ(a->nlink, 1u);
  };
  check(fs);
  ASSERT_TRUE(disk->ApplyPuts({.attrs = puts}, {}).ok());  // a retry
  check(fs);
  EXPECT_EQ(Err(fs->GetAttr(gone->ino)), ENOENT) << "a put does not bring an inode back";

  ASSERT_TRUE(disk->Checkpoint("c").ok());
  Result<std::shared_ptr<DiskFs>> view = engine_->OpenCheckpoint(DiskNo(7), "c");
  ASSERT_TRUE(view.ok());
  EXPECT_EQ(Err((*view)->ApplyPuts({.attrs = puts}, {})), EROFS);
  Reopen();
  check(*engine_->Disk(DiskNo(7)));
}

// A client's write puts (protocol.md §5.3.2): applied in order before the attribute puts of the
// same commit, several in one block (the second reads what the first wrote), the times the
// client answered kept; a write of a gone inode skipped; the same puts again leave the same
// bytes; a write to a directory refuses the whole commit; and they survive a reopen.
TEST_F(EngineTest, WritePutsStoreTheDataBeforeTheAttributes) {
  posix::FileSystem* fs = NewDisk(7);
  auto* disk = static_cast<DiskFs*>(fs);
  Result<posix::Attr> f = fs->Mknod(kRootIno, "f", S_IFREG | 02775, 0, {});
  Result<posix::Attr> gone = fs->Mknod(kRootIno, "gone", S_IFREG | 0644, 0, {});
  ASSERT_TRUE(f.ok() && gone.ok());
  ASSERT_TRUE(fs->Unlink(kRootIno, "gone").ok());
  const std::string a(1000, 'a'), b(5000, 'b');
  const posix::Puts puts{
      .writes = {{f->ino, 0, a}, {gone->ino, 0, "x"}, {f->ino, 1000, b}},
      .attrs = {{.ino = f->ino,
                 .mode = 0775,
                 .mtime = posix::Timespec{20, 2},
                 .ctime = posix::Timespec{20, 2}}},
  };
  size_t skipped = 99;
  ASSERT_TRUE(disk->ApplyPuts(puts, {}, &skipped).ok());
  EXPECT_EQ(skipped, 1u);
  auto check = [&](posix::FileSystem* on) {
    EXPECT_EQ(*on->Read(f->ino, 0, 1 << 20), a + b);
    Result<posix::Attr> at = on->GetAttr(f->ino);
    ASSERT_TRUE(at.ok());
    EXPECT_EQ(at->size, 6000u);
    EXPECT_EQ(at->blocks, 16u) << "two 4 KiB blocks";
    EXPECT_EQ(at->mode, S_IFREG | 0775) << "the write dropped set-group-ID, as the put says";
    EXPECT_EQ(at->mtime, (posix::Timespec{20, 2}));
    EXPECT_EQ(at->ctime, (posix::Timespec{20, 2}));
  };
  check(fs);
  ASSERT_TRUE(disk->ApplyPuts(puts, {}).ok());  // a retry
  check(fs);

  Result<posix::Attr> d = fs->Mkdir(kRootIno, "d", 0755, {});
  ASSERT_TRUE(d.ok());
  const posix::Puts bad{.writes = {{f->ino, 6000, "c"}, {d->ino, 0, "x"}}};
  EXPECT_EQ(Err(disk->ApplyPuts(bad, {})), EINVAL);
  EXPECT_EQ(fs->GetAttr(f->ino)->size, 6000u) << "nothing of a refused commit is applied";
  EXPECT_EQ(Err(disk->ApplyPuts({.writes = {{f->ino, 0, ""}}}, {})), EINVAL);
  Reopen();
  check(*engine_->Disk(DiskNo(7)));
}

// Inode numbers granted to a session and the creates a client answered with them (ADR 0025,
// protocol.md §5.3.2): applied before the writes and attribute puts of the same commit, with the
// client's times on the new inode and its parent; a retry changes nothing; a number is used at
// most once, by the session it was granted to; a create that cannot apply (a number used, never
// granted or another session's, a taken name, a gone parent) refuses the whole commit; a new
// grant keeps the range before it usable; the grant and what was created survive a reopen;
// ranges never overlap the numbers the server gives its own creates.
TEST_F(EngineTest, CreatePutsUseEachGrantedNumberOnce) {
  posix::FileSystem* fs = NewDisk(7);
  auto* disk = static_cast<DiskFs*>(fs);
  const SessionIdBytes s1{1}, s2{2};
  Result<posix::Ino> first = disk->GrantInos(s1, 5, {});
  Result<posix::Ino> other = disk->GrantInos(s2, 4, {});
  ASSERT_TRUE(first.ok() && other.ok());
  EXPECT_EQ(other->value(), first->value() + 5) << "ranges do not overlap";
  Result<posix::Attr> d = fs->Mkdir(kRootIno, "d", 0755, {});
  ASSERT_TRUE(d.ok());
  EXPECT_GE(d->ino.value(), other->value() + 4) << "the server's own numbers follow the ranges";
  const posix::Ino a = *first, b(first->value() + 1), c(first->value() + 2);
  const posix::Timespec t1{30, 1}, t2{31, 2};
  auto create = [&](std::string name, posix::Ino ino, uint32_t mode = S_IFREG | 0644) {
    return posix::CreatePut{d->ino, std::move(name), ino, mode, 0, 0, 0, t2};
  };
  const posix::Puts puts{
      .creates = {{d->ino, "a", a, S_IFREG | 0640, 0, 1000, 100, t1},
                  {d->ino, "fifo", b, S_IFIFO | 0600, 0, 0, 0, t1}},
      .writes = {{a, 0, "hello"}},
      .attrs = {{.ino = a, .mtime = t2, .ctime = t2}},
  };
  size_t skipped = 99;
  ASSERT_TRUE(disk->ApplyPuts(puts, {}, &skipped, &s1).ok());
  EXPECT_EQ(skipped, 0u);
  // `dir_time`: the time of the last create in d.
  auto check = [&](posix::FileSystem* on, posix::Timespec dir_time) {
    Result<posix::Attr> at = on->Lookup(d->ino, "a");
    ASSERT_TRUE(at.ok());
    EXPECT_EQ(at->ino, a);
    EXPECT_EQ(at->mode, S_IFREG | 0640u);
    EXPECT_EQ(at->uid, 1000u);
    EXPECT_EQ(at->gid, 100u);
    EXPECT_EQ(at->size, 5u);
    EXPECT_EQ(at->atime, t1);
    EXPECT_EQ(at->btime, t1);
    EXPECT_EQ(at->mtime, t2);
    EXPECT_EQ(*on->Read(a, 0, 100), "hello");
    Result<posix::Attr> fifo = on->Lookup(d->ino, "fifo");
    ASSERT_TRUE(fifo.ok());
    EXPECT_EQ(fifo->ino, b);
    EXPECT_EQ(fifo->mode, S_IFIFO | 0600u);
    Result<posix::Attr> dir = on->GetAttr(d->ino);
    ASSERT_TRUE(dir.ok());
    EXPECT_EQ(dir->mtime, dir_time) << "the parent has the time of its last create";
    EXPECT_EQ(dir->ctime, dir_time);
  };
  check(fs, t1);
  ASSERT_TRUE(disk->ApplyPuts(puts, {}, &skipped, &s1).ok());  // a retry
  check(fs, t1);

  // Whatever cannot apply refuses the whole commit: c, granted and unused, stays unused.
  auto refused = [&](const posix::CreatePut& bad) {
    const posix::Puts p{.creates = {create("c", c), bad}};
    const int e = Err(disk->ApplyPuts(p, {}, nullptr, &s1));
    EXPECT_EQ(Err(fs->Lookup(d->ino, "c")), ENOENT) << bad.name;
    return e;
  };
  EXPECT_EQ(refused(create("again", a)), EINVAL) << "a number used";
  EXPECT_EQ(refused(create("o", *other)), EINVAL) << "another session's number";
  EXPECT_EQ(refused(create("s", d->ino)), EINVAL) << "the server's own number";
  EXPECT_EQ(refused(create("fifo", posix::Ino(c.value() + 1))), EEXIST);
  EXPECT_EQ(refused({a, "x", posix::Ino(c.value() + 1), S_IFREG, 0, 0, 0, t2}), ENOTDIR);
  EXPECT_EQ(refused({d->ino, "dir", posix::Ino(c.value() + 1), S_IFDIR | 0755, 5, 0, 0, t2}),
            EINVAL)
      << "a directory with a device number";
  EXPECT_EQ(refused(create("lnk", posix::Ino(c.value() + 1), S_IFLNK | 0777)), EINVAL);
  EXPECT_EQ(refused(create("a/b", posix::Ino(c.value() + 1))), EINVAL);
  EXPECT_EQ(Err(disk->ApplyPuts({.creates = {create("c", c)}}, {})), EINVAL) << "no session";
  ASSERT_TRUE(disk->ApplyPuts({.creates = {create("c", c)}}, {}, nullptr, &s1).ok());
  EXPECT_EQ(fs->Lookup(d->ino, "c")->ino, c);

  // A new range keeps the one before it usable; the one before that goes.
  Result<posix::Ino> second = disk->GrantInos(s1, 2, {});
  ASSERT_TRUE(second.ok());
  const posix::Ino fourth(first->value() + 3), fifth(first->value() + 4);
  ASSERT_TRUE(disk->ApplyPuts({.creates = {create("new", *second), create("old", fourth)}}, {},
                              nullptr, &s1)
                  .ok());
  EXPECT_EQ(fs->Lookup(d->ino, "old")->ino, fourth);
  ASSERT_TRUE(disk->GrantInos(s1, 2, {}).ok());
  EXPECT_EQ(Err(disk->ApplyPuts({.creates = {create("gone", fifth)}}, {}, nullptr, &s1)), EINVAL)
      << "a range two grants old";

  Reopen();
  disk = *engine_->Disk(DiskNo(7));
  check(disk, t2);
  const posix::Ino unused(second->value() + 1);
  EXPECT_EQ(Err(disk->ApplyPuts({.creates = {create("again", *second)}}, {}, nullptr, &s1)), EINVAL)
      << "what the grant used survives a reopen";
  ASSERT_TRUE(disk->ApplyPuts({.creates = {create("after", unused)}}, {}, nullptr, &s1).ok());
  EXPECT_EQ(disk->Lookup(d->ino, "after")->ino, unused);
  EXPECT_EQ(Err(disk->GrantInos(s1, 0, {})), EINVAL);
  EXPECT_EQ(Err(disk->GrantInos(s1, DiskFs::kMaxInoGrant + 1, {})), EINVAL);

  ASSERT_TRUE(disk->Checkpoint("c").ok());
  Result<std::shared_ptr<DiskFs>> view = engine_->OpenCheckpoint(DiskNo(7), "c");
  ASSERT_TRUE(view.ok());
  EXPECT_EQ(Err((*view)->GrantInos(s1, 4, {})), EROFS);
}

// A directory created by a put (a mkdir the client answered, protocol.md §5.3.2) is what Mkdir
// makes: two links, its parent one more, its parent its parent; what is created in it in the same
// commit is in it; it is listed, removed and renamed as any other, also after a reopen; a remove
// put of it once empty is Rmdir's.
TEST_F(EngineTest, ADirectoryCreatePutLeavesWhatMkdirLeaves) {
  posix::FileSystem* fs = NewDisk(7);
  auto* disk = static_cast<DiskFs*>(fs);
  const SessionIdBytes s1{1};
  Result<posix::Ino> first = disk->GrantInos(s1, 4, {});
  ASSERT_TRUE(first.ok());
  Result<posix::Attr> made = fs->Mkdir(kRootIno, "made", 0750, {});
  ASSERT_TRUE(made.ok());
  const posix::Ino dir = *first, sub(first->value() + 1), file(first->value() + 2);
  const posix::Timespec t1{40, 1}, t2{41, 2};
  const posix::Puts puts{.creates = {{kRootIno, "put", dir, S_IFDIR | 0750, 0, 0, 0, t1},
                                     {dir, "sub", sub, S_IFDIR | 02700, 0, 5, 6, t2},
                                     {dir, "f", file, S_IFREG | 0600, 0, 5, 6, t2}}};
  ASSERT_TRUE(disk->ApplyPuts(puts, {}, nullptr, &s1).ok());
  ASSERT_TRUE(disk->ApplyPuts(puts, {}, nullptr, &s1).ok());  // a retry
  auto check = [&](posix::FileSystem* on) {
    Result<posix::Attr> root = on->GetAttr(kRootIno);
    ASSERT_TRUE(root.ok());
    EXPECT_EQ(root->nlink, 4u) << "its own, its \".\", and the \"..\" of made and put";
    Result<posix::Attr> p = on->Lookup(kRootIno, "put");
    ASSERT_TRUE(p.ok());
    EXPECT_EQ(p->ino, dir);
    EXPECT_EQ(p->mode, S_IFDIR | 0750u);
    EXPECT_EQ(p->nlink, 3u) << "with sub's \"..\"";
    EXPECT_EQ(p->size, made->size);
    EXPECT_EQ(p->blocks, made->blocks);
    EXPECT_EQ(p->btime, t1);
    EXPECT_EQ(p->mtime, t2) << "the time of the last create in it";
    Result<posix::Attr> s = on->Lookup(dir, "sub");
    ASSERT_TRUE(s.ok());
    EXPECT_EQ(s->mode, S_IFDIR | 02700u);
    EXPECT_EQ(s->nlink, 2u);
    EXPECT_EQ(s->uid, 5u);
    // Its parent is known to the walk that refuses a move into oneself.
    EXPECT_EQ(Err(on->Rename(kRootIno, "put", sub, "x", 0)), EINVAL);
    EXPECT_EQ(on->Lookup(dir, "f")->ino, file);
    Result<posix::DirPage> page = on->ReadDir(dir, 0, 100);
    ASSERT_TRUE(page.ok());
    EXPECT_EQ(page->entries.size(), 2u);
  };
  check(fs);
  Reopen();
  disk = *engine_->Disk(DiskNo(7));
  check(disk);
  EXPECT_EQ(Err(disk->Rmdir(kRootIno, "put")), ENOTEMPTY);
  ASSERT_TRUE(disk->Rename(dir, "sub", kRootIno, "moved", 0).ok());
  ASSERT_TRUE(disk->Rename(kRootIno, "made", sub, "m", 0).ok()) << "sub is no longer under put";
  ASSERT_TRUE(disk->Rename(sub, "m", kRootIno, "made", 0).ok());
  EXPECT_EQ(disk->GetAttr(dir)->nlink, 2u);
  ASSERT_TRUE(disk->Unlink(dir, "f").ok());
  // A remove put of an empty directory is Rmdir's at the client's time.
  const posix::Timespec t3{42, 3};
  ASSERT_TRUE(disk->ApplyPuts({.removes = {{kRootIno, "put", dir, t3}}}, {}, nullptr, &s1).ok());
  ASSERT_TRUE(disk->ApplyPuts({.removes = {{kRootIno, "put", dir, t3}}}, {}, nullptr, &s1).ok())
      << "a retry";
  EXPECT_EQ(Err(disk->Lookup(kRootIno, "put")), ENOENT);
  EXPECT_EQ(Err(disk->GetAttr(dir)), ENOENT);
  EXPECT_EQ(disk->GetAttr(kRootIno)->mtime, t3);
  ASSERT_TRUE(disk->Rmdir(kRootIno, "moved").ok());
  EXPECT_EQ(disk->GetAttr(kRootIno)->nlink, 3u);
}

// Removes are applied after the creates of their commit, also those the client answered after
// them: a parent's times are the latest of its creates' and removes' in the commit, never the time
// of a remove that came before a create in it.
TEST_F(EngineTest, AParentsTimesAreItsLatestChangesInACommit) {
  posix::FileSystem* fs = NewDisk(7);
  auto* disk = static_cast<DiskFs*>(fs);
  const SessionIdBytes s1{1};
  Result<posix::Ino> first = disk->GrantInos(s1, 4, {});
  Result<posix::Attr> d = fs->Mkdir(kRootIno, "d", 0755, {});
  Result<posix::Attr> old = fs->Mknod(d->ino, "old", S_IFREG | 0644, 0, {});
  ASSERT_TRUE(first.ok() && d.ok() && old.ok());
  const posix::Timespec t1{50, 1}, t2{51, 2};
  // The client removed "old" at t1, then created "new" and "dir" at t2.
  const posix::Puts puts{
      .creates = {{d->ino, "new", *first, S_IFREG | 0644, 0, 0, 0, t2},
                  {d->ino, "dir", posix::Ino(first->value() + 1), S_IFDIR | 0755, 0, 0, 0, t2}},
      .removes = {{d->ino, "old", old->ino, t1}}};
  ASSERT_TRUE(disk->ApplyPuts(puts, {}, nullptr, &s1).ok());
  EXPECT_EQ(fs->GetAttr(d->ino)->mtime, t2);
  EXPECT_EQ(fs->GetAttr(d->ino)->ctime, t2);
  // And a later remove alone moves them on.
  const posix::Timespec t3{52, 3};
  ASSERT_TRUE(disk->ApplyPuts({.removes = {{d->ino, "new", *first, t3}}}, {}, nullptr, &s1).ok());
  EXPECT_EQ(fs->GetAttr(d->ino)->mtime, t3);
}

// A remove put is the unlink of an inode's only name at the client's time, applied after the
// other puts of its commit: a file created, written and removed in one commit leaves nothing; a
// removed name that is gone already is a retry; a directory not empty, a name of another inode
// or of one with other names, or a parent gone, refuses the whole commit.
TEST_F(EngineTest, RemovePutsEndTheirInodeAfterTheOtherPutsAtTheClientsTime) {
  posix::FileSystem* fs = NewDisk(7);
  auto* disk = static_cast<DiskFs*>(fs);
  const SessionIdBytes s1{1};
  Result<posix::Ino> first = disk->GrantInos(s1, 4, {});
  ASSERT_TRUE(first.ok());
  Result<posix::Attr> d = fs->Mkdir(kRootIno, "d", 0755, {});
  Result<posix::Attr> sub = fs->Mkdir(d->ino, "sub", 0755, {});
  Result<posix::Attr> kept = fs->Mknod(d->ino, "kept", S_IFREG | 0644, 0, {});
  ASSERT_TRUE(d.ok() && sub.ok() && kept.ok());
  ASSERT_TRUE(fs->Write(kept->ino, 0, std::string(10000, 'k')).ok());
  ASSERT_TRUE(fs->Link(kept->ino, kRootIno, "other").ok());
  const posix::Ino a = *first;
  const posix::Timespec t1{40, 1}, t2{41, 2};

  // Whatever cannot apply refuses the whole commit: the create before it is not made.
  auto refused = [&](const posix::RemovePut& bad) {
    const posix::Puts p{.creates = {{d->ino, "c", a, S_IFREG, 0, 0, 0, t2}}, .removes = {bad}};
    const int e = Err(disk->ApplyPuts(p, {}, nullptr, &s1));
    EXPECT_EQ(Err(fs->Lookup(d->ino, "c")), ENOENT) << bad.name;
    return e;
  };
  EXPECT_EQ(refused({d->ino, "kept", kept->ino, t2}), EINVAL) << "it has another name";
  EXPECT_EQ(refused({kRootIno, "d", d->ino, t2}), ENOTEMPTY) << "a directory not empty";
  EXPECT_EQ(refused({d->ino, "sub", kept->ino, t2}), EINVAL) << "it names another inode";
  ASSERT_TRUE(fs->Unlink(kRootIno, "other").ok());
  EXPECT_EQ(refused({d->ino, "kept", sub->ino, t2}), EINVAL) << "it names another inode";
  EXPECT_EQ(refused({kept->ino, "x", kept->ino, t2}), ENOTDIR);
  EXPECT_EQ(refused({posix::Ino(a.value() + 3), "x", kept->ino, t2}), ENOENT);
  EXPECT_EQ(refused({d->ino, "a/b", kept->ino, t2}), EINVAL);
  EXPECT_TRUE(fs->Lookup(d->ino, "kept").ok());

  // A file created here earlier, written and removed in one commit (a client never carries the
  // remove of a file with its create: a retry of both could not tell the used number from a
  // misused one).
  const posix::Ino b(a.value() + 1);
  ASSERT_TRUE(disk->ApplyPuts({.creates = {{d->ino, "b", b, S_IFREG | 0644, 0, 0, 0, t1}}}, {},
                              nullptr, &s1)
                  .ok());
  const posix::Puts puts{
      .writes = {{b, 0, "soon gone"}},
      .attrs = {{.ino = b, .mode = 0600, .ctime = t1}},
      .removes = {{d->ino, "b", b, t1}, {d->ino, "kept", kept->ino, t2}},
  };
  size_t skipped = 99;
  Status applied = disk->ApplyPuts(puts, {}, &skipped, &s1);
  ASSERT_TRUE(applied.ok()) << applied.message();
  EXPECT_EQ(skipped, 0u);
  auto check = [&](posix::FileSystem* on) {
    EXPECT_EQ(Err(on->Lookup(d->ino, "b")), ENOENT);
    EXPECT_EQ(Err(on->GetAttr(b)), ENOENT) << "its only name went: the inode with it";
    EXPECT_EQ(Err(on->Lookup(d->ino, "kept")), ENOENT);
    EXPECT_EQ(Err(on->GetAttr(kept->ino)), ENOENT);
    Result<posix::Attr> dir = on->GetAttr(d->ino);
    ASSERT_TRUE(dir.ok());
    EXPECT_EQ(dir->mtime, t2) << "the parent has the time of its last remove";
    EXPECT_EQ(dir->ctime, t2);
    EXPECT_EQ(dir->nlink, 3u) << "sub is still there";
  };
  check(fs);
  // A retry: b is gone (its write and put are skipped), and so are the removed names.
  applied = disk->ApplyPuts(puts, {}, &skipped, &s1);
  ASSERT_TRUE(applied.ok()) << applied.message();
  EXPECT_EQ(skipped, 4u);
  check(fs);

  Reopen();
  check(*engine_->Disk(DiskNo(7)));
  ASSERT_TRUE((*engine_->Disk(DiskNo(7)))->Checkpoint("c").ok());
  Result<std::shared_ptr<DiskFs>> view = engine_->OpenCheckpoint(DiskNo(7), "c");
  ASSERT_TRUE(view.ok());
  EXPECT_EQ(Err((*view)->ApplyPuts({.removes = {{kRootIno, "d", d->ino, t2}}}, {})), EROFS);
}

// `rm -rf` of a tree the client made: the files and then their directory removed in one commit,
// the directory having been changed (as their parent) earlier in the same commit.
TEST_F(EngineTest, ADirectoryEmptiedAndRemovedInOneCommitIsGone) {
  posix::FileSystem* fs = NewDisk(7);
  auto* disk = static_cast<DiskFs*>(fs);
  const SessionIdBytes s1{1};
  Result<posix::Ino> first = disk->GrantInos(s1, 4, {});
  ASSERT_TRUE(first.ok());
  const posix::Ino dir = *first, f(first->value() + 1), g(first->value() + 2);
  const posix::Timespec t1{40, 1}, t2{41, 2}, t3{42, 3};
  ASSERT_TRUE(disk->ApplyPuts({.creates = {{kRootIno, "d", dir, S_IFDIR | 0755, 0, 0, 0, t1},
                                           {dir, "f", f, S_IFREG | 0644, 0, 0, 0, t1},
                                           {dir, "g", g, S_IFREG | 0644, 0, 0, 0, t1}},
                               .writes = {{f, 0, "data of f"}},
                               .attrs = {{.ino = f, .mode = 0600, .ctime = t2}}},
                              {}, nullptr, &s1)
                  .ok());
  EXPECT_EQ(fs->GetAttr(f)->size, 9u);
  EXPECT_EQ(fs->GetAttr(f)->mode, S_IFREG | 0600u) << "created, written and set in one commit";
  EXPECT_EQ(fs->GetAttr(dir)->mtime, t1);
  const posix::Puts rm{.attrs = {{.ino = g, .mode = 0400, .ctime = t2}},
                       .removes = {{dir, "f", f, t2}, {dir, "g", g, t2}, {kRootIno, "d", dir, t3}}};
  Status applied = disk->ApplyPuts(rm, {}, nullptr, &s1);
  ASSERT_TRUE(applied.ok()) << applied.message();
  auto check = [&](posix::FileSystem* on) {
    EXPECT_EQ(Err(on->Lookup(kRootIno, "d")), ENOENT);
    for (posix::Ino ino : {dir, f, g}) EXPECT_EQ(Err(on->GetAttr(ino)), ENOENT) << ino.value();
    Result<posix::Attr> root = on->GetAttr(kRootIno);
    ASSERT_TRUE(root.ok());
    EXPECT_EQ(root->nlink, 2u);
    EXPECT_EQ(root->mtime, t3);
  };
  check(fs);
  size_t skipped = 0;
  ASSERT_TRUE(disk->ApplyPuts(rm, {}, &skipped, &s1).ok()) << "a retry";
  EXPECT_EQ(skipped, 4u) << "g's put and the three removes";
  check(fs);
  Reopen();
  check(*engine_->Disk(DiskNo(7)));
}

// An inode's xattrs are bounded in total (posix::kXattrNamesMax, kXattrValuesMax: ENOSPC past
// either), so that listxattr always fits Linux's 64 KiB list and a reply always fits a frame.
TEST_F(EngineTest, XattrTotalsPerInodeAreBounded) {
  posix::FileSystem* fs = NewDisk(7);
  const posix::Ino f = fs->Mknod(kRootIno, "f", S_IFREG | 0644, 0, {})->ino;
  // 254-byte names: 257 of them and their NULs take 65,535 bytes; the 258th does not fit.
  auto name = [](int i) {
    std::string n = "user." + std::to_string(1000 + i);
    return n + std::string(254 - n.size(), 'n');
  };
  for (int i = 0; i < 257; ++i) ASSERT_TRUE(fs->SetXattr(f, name(i), "1", 0).ok()) << i;
  EXPECT_EQ(Err(fs->SetXattr(f, name(257), "1", 0)), ENOSPC);
  ASSERT_TRUE(fs->SetXattr(f, name(3), "replaced", 0).ok());  // a name already counted
  Result<std::vector<std::string>> names = fs->ListXattr(f);
  ASSERT_TRUE(names.ok());
  EXPECT_EQ(names->size(), 257u);
  ASSERT_TRUE(fs->RemoveXattr(f, name(0)).ok());
  EXPECT_TRUE(fs->SetXattr(f, name(257), "1", 0).ok());  // removal frees its share

  // Values: 16 of 64 KiB are 1 MiB, the limit; one byte more does not fit, a smaller
  // replacement does.
  const posix::Ino g = fs->Mknod(kRootIno, "g", S_IFREG | 0644, 0, {})->ino;
  const std::string v64(posix::kXattrValueMax, 'v');
  for (int i = 0; i < 16; ++i)
    ASSERT_TRUE(fs->SetXattr(g, "user.v" + std::to_string(i), v64, 0).ok());
  EXPECT_EQ(Err(fs->SetXattr(g, "user.extra", "x", 0)), ENOSPC);
  EXPECT_EQ(Err(fs->SetXattr(g, "user.v0", v64 + "x", 0)), E2BIG);  // one value's own limit
  ASSERT_TRUE(fs->SetXattr(g, "user.v0", "small", 0).ok());
  EXPECT_TRUE(fs->SetXattr(g, "user.extra", "x", 0).ok());

  // The totals are counted from what is stored: they hold after a reopen.
  Reopen();
  fs = *engine_->Disk(DiskNo(7));
  EXPECT_EQ(Err(fs->SetXattr(f, name(999), "1", 0)), ENOSPC);
  EXPECT_EQ(Err(fs->SetXattr(g, "user.v0", v64, 0)), ENOSPC);
}

// Every operation, at random, against the reference model: the same outcome each time, the same
// tree at the end, and again after a restart.
TEST_F(EngineTest, AgreesWithTheModel) {
  const uint64_t seed = TestSeed(1);
  SCOPED_TRACE("seed " + std::to_string(seed) +
               " (replay: ARCHIL_TEST_SEED=" + std::to_string(seed) + ")");
  posix::FileSystem* fs = NewDisk(1);
  posix::ModelFs model(&clock_);
  posix::FsOpGenerator gen(seed);
  std::vector<posix::Ino> he, hm;
  for (int i = 0; i < 1500; ++i) {
    posix::FsOp op = gen.Next(&model, hm.size());
    posix::FsOutcome want = posix::Apply(&model, op, &hm);
    posix::FsOutcome got = posix::Apply(fs, op, &he);
    ASSERT_EQ(got.err, want.err) << "op " << i << ": " << posix::Describe(op);
    ASSERT_TRUE(got.data == want.data) << "op " << i << ": " << posix::Describe(op);
    if (i % 100 == 99) {
      ASSERT_TRUE(engine_->SyncIntents().ok());
    }
    clock_.Advance(7);
  }
  Status same = posix::CompareTrees(&model, fs, {.times = true});
  ASSERT_TRUE(same.ok()) << same.message();
  // A clean restart: open handles go with the process; drop them on both sides.
  Reopen();
  fs = *engine_->Disk(DiskNo(1));
  ASSERT_TRUE(fs->DropHolder(posix::HolderId(1)).ok());
  ASSERT_TRUE(model.DropHolder(posix::HolderId(1)).ok());
  same = posix::CompareTrees(&model, fs, {.times = true});
  ASSERT_TRUE(same.ok()) << same.message();
}

TEST_F(EngineTest, DisksAreIndependentAndDeletable) {
  posix::FileSystem* a = NewDisk(1);
  posix::FileSystem* b = NewDisk(2);
  ASSERT_TRUE(a->Mknod(kRootIno, "only-a", S_IFREG | 0644, 0, {}).ok());
  EXPECT_EQ(Err(b->Lookup(kRootIno, "only-a")), ENOENT);
  Result<posix::Attr> f = b->Mknod(kRootIno, "f", S_IFREG | 0644, 0, {});
  ASSERT_TRUE(b->Write(f->ino, 0, std::string(10000, 'b')).ok());
  ASSERT_TRUE(engine_->DeleteDisk(DiskNo(2)).ok());
  EXPECT_EQ(engine_->Disk(DiskNo(2)).status().code(), Status::Code::kNotFound);
  ASSERT_TRUE(engine_->WaitForPurges().ok());
  EXPECT_FALSE(*env_.FileExists("/data/segments/0000000000000002"));
  EXPECT_EQ(*engine_->CountKeys(DiskNo(2), Cf::kInode), 0u);
  Reopen();
  EXPECT_EQ(engine_->Disk(DiskNo(2)).status().code(), Status::Code::kNotFound);
  EXPECT_TRUE((*engine_->Disk(DiskNo(1)))->Lookup(kRootIno, "only-a").ok());
  EXPECT_EQ(engine_->ListDisks(), std::vector<DiskNo>{DiskNo(1)});
}

// A deleted disk whose space could not be freed (its segments' directory cannot be removed) is
// gone for users at once, and its space is freed at the next open.
TEST_F(EngineTest, AnInterruptedDiskPurgeResumesAtOpen) {
  posix::FileSystem* b = NewDisk(2);
  Result<posix::Attr> f = b->Mknod(kRootIno, "f", S_IFREG | 0644, 0, {});
  ASSERT_TRUE(b->Write(f->ino, 0, std::string(1 << 20, 'b')).ok());
  io::FaultRule rule;
  rule.ops = io::kSimRemoveDir | io::kSimUnlink;
  rule.path_contains = "/data/segments/0000000000000002";
  rule.times = 0;
  env_.AddFaultRule(rule);
  ASSERT_TRUE(engine_->DeleteDisk(DiskNo(2)).ok());
  EXPECT_EQ(engine_->Disk(DiskNo(2)).status().code(), Status::Code::kNotFound);
  EXPECT_EQ(ErrnoFor(engine_->WaitForPurges()), EIO);
  EXPECT_TRUE(*env_.FileExists("/data/segments/0000000000000002"));
  EXPECT_EQ(engine_->CreateDisk(DiskNo(2), {}).code(), Status::Code::kAlreadyExists);
  env_.ClearFaultRules();
  Reopen();
  ASSERT_TRUE(engine_->WaitForPurges().ok());
  EXPECT_EQ(engine_->Disk(DiskNo(2)).status().code(), Status::Code::kNotFound);
  EXPECT_FALSE(*env_.FileExists("/data/segments/0000000000000002"));
  EXPECT_EQ(*engine_->CountKeys(DiskNo(2), Cf::kInode), 0u);
  // The number is free again.
  EXPECT_TRUE(engine_->CreateDisk(DiskNo(2), {}).ok());
}

// An inode unlinked while open lives on, also across a restart, until its holder lets go.
TEST_F(EngineTest, OrphansOutliveARestart) {
  posix::FileSystem* fs = NewDisk(3);
  posix::Ino f = fs->Mknod(kRootIno, "f", S_IFREG | 0644, 0, {})->ino;
  ASSERT_TRUE(fs->Write(f, 0, "data").ok());
  ASSERT_TRUE(fs->Open(f, posix::HolderId(42)).ok());
  ASSERT_TRUE(fs->Unlink(kRootIno, "f").ok());
  Reopen();
  fs = *engine_->Disk(DiskNo(3));
  EXPECT_EQ(*fs->Read(f, 0, 10), "data");
  EXPECT_EQ(fs->GetAttr(f)->nlink, 0u);
  ASSERT_TRUE(fs->Release(f, posix::HolderId(42)).ok());
  EXPECT_EQ(Err(fs->GetAttr(f)), ENOENT);
  Reopen();
  EXPECT_EQ(Err((*engine_->Disk(DiskNo(3)))->GetAttr(f)), ENOENT);
}

// Small writes ride as intents; after the segment is synced they are dropped, and a power loss
// before that loses nothing.
TEST_F(EngineTest, IntentsCoverUnsyncedSegmentData) {
  posix::FileSystem* fs = NewDisk(4);
  posix::Ino f = fs->Mknod(kRootIno, "f", S_IFREG | 0644, 0, {})->ino;
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(
        fs->Write(f, uint64_t(i) * 4096, std::string(4096, static_cast<char>('a' + i))).ok());
  }
  engine_.reset();
  env_.SimulatePowerLoss(5);
  Reopen();
  fs = *engine_->Disk(DiskNo(4));
  for (int i = 0; i < 10; ++i) {
    Result<std::string> r = fs->Read(f, uint64_t(i) * 4096, 4096);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(*r, std::string(4096, static_cast<char>('a' + i)));
  }
  ASSERT_TRUE(engine_->SyncIntents().ok());
}

// Writes the default-CF schema record of the data directory with a raw RocksDB.
void WriteSchema(io::Env* env, const std::string& dir, uint32_t min_reader, bool with_meta) {
  std::unique_ptr<rocksdb::Env> renv = io::NewRocksEnv(env);
  rocksdb::Options o;
  o.env = renv.get();
  o.create_if_missing = true;
  o.create_missing_column_families = true;
  std::vector<rocksdb::ColumnFamilyDescriptor> cfds;
  for (const std::string& name : CfNames()) cfds.emplace_back(name, rocksdb::ColumnFamilyOptions());
  std::vector<rocksdb::ColumnFamilyHandle*> h;
  rocksdb::DB* db = nullptr;
  ASSERT_TRUE(rocksdb::DB::Open(o, dir + "/db", cfds, &h, &db).ok());
  if (min_reader) {
    SchemaRecord schema;
    schema.schema = min_reader;
    schema.min_reader = min_reader;
    ASSERT_TRUE(
        db->Put({}, h[0], DefaultKey(DefaultRecordType::kSchema), EncodeSchema(schema)).ok());
  } else {
    ASSERT_TRUE(db->Delete({}, h[0], DefaultKey(DefaultRecordType::kSchema)).ok());
  }
  if (with_meta) {
    ASSERT_TRUE(db->Put({}, h[1], MetaKey(DiskNo(1), MetaType::kCounters), "x").ok());
  }
  for (auto* x : h) db->DestroyColumnFamilyHandle(x);
  delete db;
}

TEST_F(EngineTest, RefusesANewerFormatAndForeignData) {
  NewDisk(5);
  engine_.reset();
  WriteSchema(&env_, "/data", kCurrentSchema + 1, false);
  Result<std::unique_ptr<Engine>> e = Engine::Open(Options());
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("newer archil"), std::string::npos) << e.status().ToString();

  // Data without a schema record is refused, never reinterpreted.
  WriteSchema(&env_, "/data", 0, true);
  e = Engine::Open(Options());
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().code(), Status::Code::kCorruption) << e.status().ToString();

  WriteSchema(&env_, "/data", kCurrentSchema, false);
  Reopen();
}

TEST_F(EngineTest, CorruptDataIsAnErrorNotWrongBytes) {
  posix::FileSystem* fs = NewDisk(6);
  posix::Ino f = fs->Mknod(kRootIno, "f", S_IFREG | 0644, 0, {})->ino;
  ASSERT_TRUE(fs->Write(f, 0, std::string(8192, 'z')).ok());
  ASSERT_TRUE(engine_->SyncIntents().ok());
  // Flip a byte of the segment behind the engine's back.
  std::vector<std::string> segs = *env_.ListDir("/data/segments/0000000000000006");
  ASSERT_FALSE(segs.empty());
  auto file = env_.OpenFile("/data/segments/0000000000000006/" + segs[0], {});
  ASSERT_TRUE(file.ok());
  ASSERT_TRUE((*file)->Pwrite(4096 + 100, "Y").ok());
  Result<std::string> r = fs->Read(f, 0, 8192);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kCorruption);
  EXPECT_EQ(Err(r), EIO);
}

}  // namespace
}  // namespace archil::engine
