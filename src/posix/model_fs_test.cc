#include "posix/model_fs.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cerrno>
#include <set>

namespace archil::posix {
namespace {

int Err(const Status& s) { return ErrnoFor(s); }
template <typename T>
int Err(const Result<T>& r) {
  return ErrnoFor(r.status());
}

class ModelFsTest : public ::testing::Test {
 protected:
  FakeClock clock_;
  ModelFs fs_{&clock_};
  const Owner me_{1000, 1000};

  Ino File(Ino dir, const char* name) { return fs_.Mknod(dir, name, S_IFREG | 0644, 0, me_)->ino; }
  Ino Dir(Ino dir, const char* name) { return fs_.Mkdir(dir, name, 0755, me_)->ino; }
  std::set<std::string> Names(Ino dir) {
    std::set<std::string> out;
    Result<DirPage> page = fs_.ReadDir(dir, 0, 1000);
    for (const DirEntry& e : page->entries) out.insert(e.name);
    return out;
  }
};

TEST_F(ModelFsTest, CreateLookupAndTheErrorsOfNames) {
  Ino f = File(kRootIno, "a");
  EXPECT_EQ(fs_.Lookup(kRootIno, "a")->ino, f);
  EXPECT_EQ(fs_.GetAttr(f)->uid, 1000u);
  EXPECT_EQ(Err(fs_.Lookup(kRootIno, "b")), ENOENT);
  EXPECT_EQ(Err(fs_.Mknod(kRootIno, "a", S_IFREG | 0644, 0, me_)), EEXIST);
  EXPECT_EQ(Err(fs_.Lookup(f, "x")), ENOTDIR);
  EXPECT_EQ(Err(fs_.Lookup(kRootIno, std::string(256, 'n'))), ENAMETOOLONG);
  EXPECT_TRUE(fs_.Lookup(kRootIno, std::string(255, 'n')).status().code() ==
              Status::Code::kNotFound);
  for (const char* bad : {"", ".", "..", "a/b"}) {
    EXPECT_EQ(Err(fs_.Mkdir(kRootIno, bad, 0755, me_)), EINVAL) << bad;
  }
  EXPECT_EQ(Err(fs_.Mknod(kRootIno, "d", S_IFDIR | 0755, 0, me_)), EINVAL);
  Result<Attr> dev = fs_.Mknod(kRootIno, "tty", S_IFCHR | 0600, 0x0501, me_);
  ASSERT_TRUE(dev.ok());
  EXPECT_EQ(dev->rdev, 0x0501u);
}

TEST_F(ModelFsTest, LinkCountsAndTimesFollowExt4) {
  Ino d = Dir(kRootIno, "d");
  EXPECT_EQ(fs_.GetAttr(kRootIno)->nlink, 3u);
  EXPECT_EQ(fs_.GetAttr(d)->nlink, 2u);
  Timespec before = fs_.GetAttr(d)->mtime;
  clock_.Advance(1000);
  Ino f = File(d, "f");
  EXPECT_GT(fs_.GetAttr(d)->mtime, before);
  ASSERT_TRUE(fs_.Link(f, kRootIno, "g").ok());
  EXPECT_EQ(fs_.GetAttr(f)->nlink, 2u);
  EXPECT_EQ(Err(fs_.Link(d, kRootIno, "dd")), EPERM);
  EXPECT_EQ(Err(fs_.Unlink(kRootIno, "d")), EISDIR);
  EXPECT_EQ(Err(fs_.Rmdir(kRootIno, "d")), ENOTEMPTY);
  EXPECT_EQ(Err(fs_.Rmdir(kRootIno, "g")), ENOTDIR);
  ASSERT_TRUE(fs_.Unlink(d, "f").ok());
  EXPECT_EQ(fs_.GetAttr(f)->nlink, 1u);
  ASSERT_TRUE(fs_.Rmdir(kRootIno, "d").ok());
  EXPECT_EQ(fs_.GetAttr(kRootIno)->nlink, 2u);
  EXPECT_EQ(Err(fs_.GetAttr(d)), ENOENT);
}

TEST_F(ModelFsTest, RenameRules) {
  Ino a = Dir(kRootIno, "a");
  Ino b = Dir(a, "b");
  Ino f = File(kRootIno, "f");
  File(kRootIno, "g");
  // Into its own subtree.
  EXPECT_EQ(Err(fs_.Rename(kRootIno, "a", b, "x", 0)), EINVAL);
  EXPECT_EQ(Err(fs_.Rename(kRootIno, "a", a, "x", 0)), EINVAL);
  // Type mismatches and non-empty targets.
  EXPECT_EQ(Err(fs_.Rename(kRootIno, "f", kRootIno, "a", 0)), EISDIR);
  EXPECT_EQ(Err(fs_.Rename(kRootIno, "a", kRootIno, "f", 0)), ENOTDIR);
  Dir(kRootIno, "e");
  EXPECT_EQ(Err(fs_.Rename(kRootIno, "e", kRootIno, "a", 0)), ENOTEMPTY);
  EXPECT_EQ(Err(fs_.Rename(kRootIno, "f", kRootIno, "g", kRenameNoReplace)), EEXIST);
  EXPECT_EQ(Err(fs_.Rename(kRootIno, "f", kRootIno, "g", 3)), EINVAL);
  // Over an existing file: the target inode goes.
  Ino g = fs_.Lookup(kRootIno, "g")->ino;
  ASSERT_TRUE(fs_.Rename(kRootIno, "f", kRootIno, "g", 0).ok());
  EXPECT_EQ(fs_.Lookup(kRootIno, "g")->ino, f);
  EXPECT_EQ(Err(fs_.GetAttr(g)), ENOENT);
  // A directory over an empty one, across parents: link counts move.
  ASSERT_TRUE(fs_.Rename(a, "b", kRootIno, "e", 0).ok());
  EXPECT_EQ(fs_.GetAttr(a)->nlink, 2u);
  EXPECT_EQ(fs_.GetAttr(kRootIno)->nlink, 4u);  // ., a, e(b), and its own
  EXPECT_EQ(fs_.Lookup(kRootIno, "e")->ino, b);
  // Exchange a file and a directory across parents.
  ASSERT_TRUE(fs_.Rename(kRootIno, "g", a, "z", kRenameNoReplace).ok());
  ASSERT_TRUE(fs_.Rename(a, "z", kRootIno, "e", kRenameExchange).ok());
  EXPECT_EQ(fs_.Lookup(a, "z")->ino, b);
  EXPECT_EQ(fs_.Lookup(kRootIno, "e")->ino, f);
  EXPECT_EQ(fs_.GetAttr(a)->nlink, 3u);
  EXPECT_EQ(fs_.GetAttr(kRootIno)->nlink, 3u);
  EXPECT_EQ(Err(fs_.Rename(kRootIno, "e", kRootIno, "none", kRenameExchange)), ENOENT);
  // Same inode under two names: nothing happens.
  ASSERT_TRUE(fs_.Link(f, kRootIno, "f2").ok());
  ASSERT_TRUE(fs_.Rename(kRootIno, "e", kRootIno, "f2", 0).ok());
  EXPECT_EQ(Names(kRootIno), (std::set<std::string>{"a", "e", "f2"}));
}

TEST_F(ModelFsTest, DataHolesTruncateAndFallocate) {
  Ino f = File(kRootIno, "f");
  ASSERT_TRUE(fs_.Write(f, 10000, "hello").ok());
  EXPECT_EQ(fs_.GetAttr(f)->size, 10005u);
  EXPECT_EQ(*fs_.Read(f, 9998, 100), std::string(2, '\0') + "hello");
  EXPECT_EQ(*fs_.Read(f, 20000, 10), "");
  SetAttrRequest shrink;
  shrink.size = 10002;
  ASSERT_TRUE(fs_.SetAttr(f, shrink).ok());
  shrink.size = 10010;
  ASSERT_TRUE(fs_.SetAttr(f, shrink).ok());
  EXPECT_EQ(*fs_.Read(f, 10000, 10), std::string("he") + std::string(8, '\0'));
  ASSERT_TRUE(fs_.Fallocate(f, kFallocPunchHole | kFallocKeepSize, 10001, 1).ok());
  EXPECT_EQ(*fs_.Read(f, 10000, 2), std::string("h\0", 2));
  EXPECT_EQ(Err(fs_.Fallocate(f, kFallocPunchHole, 0, 1)), EOPNOTSUPP);
  EXPECT_EQ(Err(fs_.Fallocate(f, 0, 0, 0)), EINVAL);
  ASSERT_TRUE(fs_.Fallocate(f, kFallocKeepSize, 0, 1 << 20).ok());
  EXPECT_EQ(fs_.GetAttr(f)->size, 10010u);
  ASSERT_TRUE(fs_.Fallocate(f, 0, 0, 1 << 20).ok());
  EXPECT_EQ(fs_.GetAttr(f)->size, 1u << 20);
  ASSERT_TRUE(fs_.Fallocate(f, kFallocZeroRange, 10000, 1 << 21).ok());
  EXPECT_EQ(fs_.GetAttr(f)->size, 10000u + (1u << 21));
  EXPECT_EQ(*fs_.Read(f, 10000, 1), std::string(1, '\0'));
  // Beyond 4 GiB, sparse.
  ASSERT_TRUE(fs_.Write(f, uint64_t{5} << 30, "x").ok());
  EXPECT_EQ(*fs_.Read(f, uint64_t{5} << 30, 2), "x");
  EXPECT_EQ(Err(fs_.Write(f, kMaxFileSize, "xy")), EFBIG);
  EXPECT_EQ(Err(fs_.Write(kRootIno, 0, "x")), EISDIR);
}

TEST_F(ModelFsTest, WritesDropSetuidBits) {
  Ino f = fs_.Mknod(kRootIno, "s", S_IFREG | 06755, 0, me_)->ino;
  ASSERT_TRUE(fs_.Write(f, 0, "x").ok());
  EXPECT_EQ(fs_.GetAttr(f)->mode & 07777, 0755u);
  Ino g = fs_.Mknod(kRootIno, "t", S_IFREG | 02644, 0, me_)->ino;  // setgid without group exec
  ASSERT_TRUE(fs_.Write(g, 0, "x").ok());
  EXPECT_EQ(fs_.GetAttr(g)->mode & 07777, 02644u);
}

TEST_F(ModelFsTest, UnlinkedButOpenLivesUntilTheLastRelease) {
  Ino f = File(kRootIno, "f");
  ASSERT_TRUE(fs_.Open(f, HolderId(7)).ok());
  ASSERT_TRUE(fs_.Open(f, HolderId(7)).ok());
  ASSERT_TRUE(fs_.Unlink(kRootIno, "f").ok());
  ASSERT_TRUE(fs_.Write(f, 0, "still here").ok());
  EXPECT_EQ(*fs_.Read(f, 0, 100), "still here");
  EXPECT_EQ(fs_.GetAttr(f)->nlink, 0u);
  EXPECT_EQ(Err(fs_.Link(f, kRootIno, "back")), ENOENT);
  ASSERT_TRUE(fs_.Release(f, HolderId(7)).ok());
  EXPECT_TRUE(fs_.GetAttr(f).ok());
  EXPECT_EQ(Err(fs_.Release(f, HolderId(8))), EINVAL);
  ASSERT_TRUE(fs_.Release(f, HolderId(7)).ok());
  EXPECT_EQ(Err(fs_.GetAttr(f)), ENOENT);
  // A holder that goes away releases everything it held.
  Ino g = File(kRootIno, "g");
  ASSERT_TRUE(fs_.Open(g, HolderId(9)).ok());
  ASSERT_TRUE(fs_.Open(g, HolderId(9)).ok());
  ASSERT_TRUE(fs_.Unlink(kRootIno, "g").ok());
  EXPECT_TRUE(fs_.GetAttr(g).ok());
  ASSERT_TRUE(fs_.DropHolder(HolderId(9)).ok());
  EXPECT_EQ(Err(fs_.GetAttr(g)), ENOENT);
}

TEST_F(ModelFsTest, XattrsAndTheirFlags) {
  Ino f = File(kRootIno, "f");
  EXPECT_EQ(Err(fs_.GetXattr(f, "user.a")), ENODATA);
  ASSERT_TRUE(fs_.SetXattr(f, "user.a", "1", kXattrCreate).ok());
  EXPECT_EQ(Err(fs_.SetXattr(f, "user.a", "2", kXattrCreate)), EEXIST);
  EXPECT_EQ(Err(fs_.SetXattr(f, "user.b", "2", kXattrReplace)), ENODATA);
  ASSERT_TRUE(fs_.SetXattr(f, "user.a", "2", kXattrReplace).ok());
  ASSERT_TRUE(fs_.SetXattr(f, "system.posix_acl_access", std::string("\x02\0\0\0", 4), 0).ok());
  EXPECT_EQ(Err(fs_.SetXattr(f, "other.x", "1", 0)), EOPNOTSUPP);
  EXPECT_EQ(Err(fs_.SetXattr(f, "user.big", std::string(kXattrValueMax + 1, 'v'), 0)), E2BIG);
  EXPECT_EQ(*fs_.GetXattr(f, "user.a"), "2");
  EXPECT_EQ(*fs_.ListXattr(f), (std::vector<std::string>{"system.posix_acl_access", "user.a"}));
  ASSERT_TRUE(fs_.RemoveXattr(f, "user.a").ok());
  EXPECT_EQ(Err(fs_.RemoveXattr(f, "user.a")), ENODATA);
}

TEST_F(ModelFsTest, XattrTotalsPerInodeAreBounded) {
  Ino f = File(kRootIno, "f");
  const std::string v64(kXattrValueMax, 'v');
  for (int i = 0; i < 16; ++i) ASSERT_TRUE(fs_.SetXattr(f, "user.v" + std::to_string(i), v64, 0).ok());
  EXPECT_EQ(Err(fs_.SetXattr(f, "user.extra", "x", 0)), ENOSPC);
  ASSERT_TRUE(fs_.SetXattr(f, "user.v0", "", 0).ok());
  ASSERT_TRUE(fs_.SetXattr(f, "user.extra", "x", 0).ok());
  Ino g = File(kRootIno, "g");
  int set = 0;
  while (fs_.SetXattr(g, "user." + std::to_string(100000 + set) + std::string(243, 'n'), "", 0).ok()) {
    ++set;
  }
  EXPECT_EQ(set, 257);  // 254-byte names and their NULs: 257 x 255 = 65,535 bytes
}

// Cookies stay valid while the directory changes: paging through while entries come and go
// returns every entry that stayed exactly once.
TEST_F(ModelFsTest, ReadDirCookiesSurviveChanges) {
  for (int i = 0; i < 50; ++i) File(kRootIno, ("f" + std::to_string(i)).c_str());
  std::multiset<std::string> seen;
  uint64_t cookie = 0;
  for (int round = 0;; ++round) {
    DirPage page = *fs_.ReadDir(kRootIno, cookie, 7);
    for (const DirEntry& e : page.entries) seen.insert(e.name);
    if (!page.entries.empty()) cookie = page.entries.back().cookie;
    if (page.eof) break;
    // Remove one entry not yet seen and add one.
    ASSERT_TRUE(fs_.Unlink(kRootIno, "f" + std::to_string(49 - round)).ok());
    File(kRootIno, ("new" + std::to_string(round)).c_str());
  }
  for (int i = 0; i < 40; ++i) EXPECT_EQ(seen.count("f" + std::to_string(i)), 1u) << i;
  for (const std::string& name : seen) EXPECT_EQ(seen.count(name), 1u) << name;
}

TEST_F(ModelFsTest, SetAttrAndCopies) {
  Ino f = File(kRootIno, "f");
  SetAttrRequest r;
  r.mode = 0600;
  r.uid = 5;
  r.mtime = TimeUpdate::At({100, 5});
  Result<Attr> a = fs_.SetAttr(f, r);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->mode, static_cast<uint32_t>(S_IFREG | 0600));
  EXPECT_EQ(a->uid, 5u);
  EXPECT_EQ(a->mtime, (Timespec{100, 5}));
  r = {};
  r.mode = 010000;
  EXPECT_EQ(Err(fs_.SetAttr(f, r)), EINVAL);
  r = {};
  r.size = 1;
  EXPECT_EQ(Err(fs_.SetAttr(kRootIno, r)), EISDIR);
  // A copy is independent.
  ModelFs copy(fs_);
  ASSERT_TRUE(fs_.Unlink(kRootIno, "f").ok());
  EXPECT_TRUE(copy.Lookup(kRootIno, "f").ok());
  EXPECT_EQ(copy.InodeCount(), 2u);
  EXPECT_EQ(fs_.InodeCount(), 1u);
}

}  // namespace
}  // namespace archil::posix
