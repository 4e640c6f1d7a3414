// MountCore over the reference model: node ids, ownership of new nodes, local opens and the hold
// that keeps an open file alive past its last name, read-only mounts, and readdir offsets.
#include "fs/mount_core.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cerrno>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/test_seed.h"
#include "posix/model_fs.h"

namespace archil::fs {
namespace {

class MountCoreTest : public ::testing::Test {
 protected:
  posix::ModelFs model_{&SystemClock::Instance(), 0755};
  MountCore core_{&model_, posix::kRootIno, MountOptions{}};
};

int Err(const Status& s) { return ErrnoFor(s); }
template <typename T>
int Err(const Result<T>& r) {
  return r.ok() ? 0 : ErrnoFor(r.status());
}

TEST_F(MountCoreTest, NewNodesBelongToTheCaller) {
  Result<NodeAttr> f = core_.Mknod(kRootNode, "f", S_IFREG | 0640, 0, Caller{1000, 100});
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(f.value().attr.uid, 1000u);
  EXPECT_EQ(f.value().attr.gid, 100u);
  EXPECT_EQ(f.value().attr.mode, S_IFREG | 0640u);
  Result<NodeAttr> d = core_.Mkdir(kRootNode, "d", 0750, Caller{1001, 101});
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d.value().attr.uid, 1001u);
  EXPECT_EQ(d.value().attr.gid, 101u);
  EXPECT_EQ(d.value().attr.mode & 07777, 0750u);
}

TEST_F(MountCoreTest, SetGroupIdDirectoryGivesItsGroupAndBitToNewNodes) {
  Result<NodeAttr> d = core_.Mkdir(kRootNode, "shared", 0775, Caller{0, 0});
  ASSERT_TRUE(d.ok());
  posix::SetAttrRequest chgrp;
  chgrp.gid = 500;
  chgrp.mode = 02775;
  ASSERT_TRUE(core_.SetAttr(d.value().node, chgrp).ok());
  Result<NodeAttr> f = core_.Mknod(d.value().node, "f", S_IFREG | 0644, 0, Caller{1000, 100});
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f.value().attr.gid, 500u);
  EXPECT_EQ(f.value().attr.mode & S_ISGID, 0u);  // files do not inherit the bit
  Result<NodeAttr> sub = core_.Mkdir(d.value().node, "sub", 0755, Caller{1000, 100});
  ASSERT_TRUE(sub.ok());
  EXPECT_EQ(sub.value().attr.gid, 500u);
  EXPECT_EQ(sub.value().attr.mode & 07777, 02755u);  // directories do
  Result<NodeAttr> l = core_.Symlink(d.value().node, "l", "f", Caller{1000, 100});
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l.value().attr.gid, 500u);
  // Clearing the bit through the mount is seen at once.
  posix::SetAttrRequest clear;
  clear.mode = 0775;
  ASSERT_TRUE(core_.SetAttr(d.value().node, clear).ok());
  Result<NodeAttr> g = core_.Mknod(d.value().node, "g", S_IFREG | 0644, 0, Caller{1000, 100});
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g.value().attr.gid, 100u);
}

TEST_F(MountCoreTest, OpenFileOutlivesItsLastName) {
  uint64_t handle = 0;
  Result<NodeAttr> f = core_.Create(kRootNode, "f", 0644, Caller{}, &handle);
  ASSERT_TRUE(f.ok());
  ASSERT_TRUE(core_.Write(f.value().node, 0, "hello").ok());
  EXPECT_EQ(core_.stats().open_files, 1u);
  ASSERT_TRUE(core_.Unlink(kRootNode, "f").ok());
  EXPECT_EQ(core_.stats().held_orphans, 1u);
  EXPECT_EQ(Err(core_.Lookup(kRootNode, "f")), ENOENT);
  Result<std::string> r = core_.Read(f.value().node, 0, 100);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r.value(), "hello");
  ASSERT_TRUE(core_.GetAttr(f.value().node).ok());
  ASSERT_TRUE(core_.Release(f.value().node).ok());
  EXPECT_EQ(core_.stats().held_orphans, 0u);
  EXPECT_EQ(core_.stats().open_files, 0u);
  EXPECT_EQ(Err(core_.GetAttr(f.value().node)), ENOENT);  // gone with its last close
}

TEST_F(MountCoreTest, FileReplacedByRenameStaysReadableWhileOpen) {
  uint64_t h = 0;
  Result<NodeAttr> a = core_.Create(kRootNode, "a", 0644, Caller{}, &h);
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE(core_.Write(a.value().node, 0, "old").ok());
  Result<NodeAttr> b = core_.Create(kRootNode, "b", 0644, Caller{}, &h);
  ASSERT_TRUE(b.ok());
  ASSERT_TRUE(core_.Release(b.value().node).ok());
  ASSERT_TRUE(core_.Rename(kRootNode, "b", kRootNode, "a", 0).ok());
  Result<std::string> r = core_.Read(a.value().node, 0, 10);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.value(), "old");
  ASSERT_TRUE(core_.Release(a.value().node).ok());
  EXPECT_EQ(Err(core_.GetAttr(a.value().node)), ENOENT);
}

TEST_F(MountCoreTest, UnopenedFilesAreRemovedWithoutAHold) {
  uint64_t h = 0;
  Result<NodeAttr> open = core_.Create(kRootNode, "open", 0644, Caller{}, &h);
  ASSERT_TRUE(open.ok());
  Result<NodeAttr> other = core_.Mknod(kRootNode, "other", S_IFREG | 0644, 0, Caller{});
  ASSERT_TRUE(other.ok());
  ASSERT_TRUE(core_.Unlink(kRootNode, "other").ok());
  EXPECT_EQ(core_.stats().held_orphans, 0u);
  EXPECT_EQ(Err(core_.GetAttr(other.value().node)), ENOENT);
  ASSERT_TRUE(core_.Release(open.value().node).ok());
}

// The model, recording which unlinks its caller said removed an inode's only name.
class LastNameModel : public posix::ModelFs {
 public:
  using ModelFs::ModelFs;
  Status UnlinkLast(posix::Ino parent, std::string_view name, posix::Ino ino) override {
    last.push_back(std::string(name) + "=" + std::to_string(ino.value()));
    return Unlink(parent, name);
  }
  std::vector<std::string> last;
};

// An unlink says which inode goes with the name when the mount saw it as the inode's only name
// (a create, a lookup, a listing) and has nothing of it open; a link forgets what was seen.
TEST(MountCoreLastNames, AnUnlinkNamesTheInodeOnlyWhenItIsItsLastNameAndNotOpen) {
  LastNameModel model{&SystemClock::Instance(), 0755};
  MountCore core{&model, posix::kRootIno, MountOptions{}};
  auto make = [&](const char* name) {
    Result<NodeAttr> a = core.Mknod(kRootNode, name, S_IFREG | 0644, 0, Caller{});
    EXPECT_TRUE(a.ok());
    return a.ok() ? a->attr.ino.value() : 0;
  };
  const uint64_t a = make("a"), b = make("b"), c = make("c"), d = make("d"), e = make("e");
  ASSERT_TRUE(core.Link(b, kRootNode, "b2").ok());  // b has two names; what was seen is gone
  ASSERT_TRUE(core.Unlink(kRootNode, "a").ok()) << "seen at its create";
  ASSERT_TRUE(core.Unlink(kRootNode, "b").ok()) << "not seen since the link";
  ASSERT_TRUE(core.Lookup(kRootNode, "c").ok());
  ASSERT_TRUE(core.Link(c, kRootNode, "c2").ok());
  ASSERT_TRUE(core.Lookup(kRootNode, "c").ok());
  ASSERT_TRUE(core.Unlink(kRootNode, "c").ok()) << "seen with two names: no inode named";
  ASSERT_TRUE(core.Lookup(kRootNode, "b2").ok());
  ASSERT_TRUE(core.Unlink(kRootNode, "b2").ok()) << "its last name now";
  ASSERT_TRUE(core.Rename(kRootNode, "d", kRootNode, "d2", 0).ok());
  ASSERT_TRUE(core.Lookup(kRootNode, "d2").ok());
  const uint64_t handle = core.Open(e);
  (void)handle;
  ASSERT_TRUE(core.Lookup(kRootNode, "e").ok());
  ASSERT_TRUE(core.Unlink(kRootNode, "e").ok()) << "open here: held, not the end of it";
  ASSERT_TRUE(core.Unlink(kRootNode, "d2").ok()) << "a file is open: asked, and this one is not";
  EXPECT_EQ(model.last,
            (std::vector<std::string>{"a=" + std::to_string(a), "b2=" + std::to_string(b),
                                      "d2=" + std::to_string(d)}));
}

// The model, counting the listings asked of it.
class ListingModel : public posix::ModelFs {
 public:
  using ModelFs::ModelFs;
  Result<posix::DirPage> ReadDir(posix::Ino dir, uint64_t after, size_t max) override {
    ++listings;
    return ModelFs::ReadDir(dir, after, max);
  }
  int listings = 0;
};

// The kernel's READDIR past the end the disk gave is answered empty without a request, once, and
// only while no name changed since; a read-only mount (whose disk others may change) always asks.
TEST(MountCoreListingEnds, TheReadPastTheEndCostsNoRequestWhileNoNameChanged) {
  ListingModel model{&SystemClock::Instance(), 0755};
  MountCore core{&model, posix::kRootIno, MountOptions{}};
  for (const char* n : {"a", "b"}) ASSERT_TRUE(core.Mknod(kRootNode, n, S_IFREG, 0, {}).ok());
  auto read = [&](uint64_t offset, bool* eof) {
    Result<std::vector<DirItem>> r = core.ReadDir(kRootNode, offset, 100, eof);
    EXPECT_TRUE(r.ok());
    return r.ok() ? *r : std::vector<DirItem>{};
  };
  bool eof = false;
  std::vector<DirItem> page = read(0, &eof);
  ASSERT_EQ(page.size(), 4u);  // ".", "..", a, b
  ASSERT_TRUE(eof);
  EXPECT_EQ(model.listings, 1);
  EXPECT_TRUE(read(page.back().offset, &eof).empty());
  EXPECT_TRUE(eof);
  EXPECT_EQ(model.listings, 1) << "the end was known";
  EXPECT_EQ(core.stats().local_listing_ends, 1u);
  EXPECT_TRUE(read(page.back().offset, &eof).empty());
  EXPECT_EQ(model.listings, 2) << "used once";

  page = read(0, &eof);
  ASSERT_TRUE(core.Mknod(kRootNode, "c", S_IFREG, 0, {}).ok());  // between two reads
  std::vector<DirItem> rest = read(page.back().offset, &eof);
  ASSERT_EQ(rest.size(), 1u) << "a name changed: asked, and the new one listed";
  EXPECT_EQ(rest[0].name, "c");

  ListingModel ro_model{&SystemClock::Instance(), 0755};
  MountCore ro{&ro_model, posix::kRootIno, MountOptions{.read_only = true}};
  Result<std::vector<DirItem>> all = ro.ReadDir(kRootNode, 0, 100, &eof);
  ASSERT_TRUE(all.ok() && eof);
  ASSERT_TRUE(ro.ReadDir(kRootNode, all->back().offset, 100, &eof).ok());
  EXPECT_EQ(ro_model.listings, 2);
}

TEST_F(MountCoreTest, OpenDirectoryOutlivesRmdir) {
  Result<NodeAttr> d = core_.Mkdir(kRootNode, "d", 0755, Caller{});
  ASSERT_TRUE(d.ok());
  core_.OpenDir(d.value().node);
  ASSERT_TRUE(core_.Rmdir(kRootNode, "d").ok());
  EXPECT_TRUE(core_.GetAttr(d.value().node).ok());
  ASSERT_TRUE(core_.Release(d.value().node).ok());
  EXPECT_EQ(Err(core_.GetAttr(d.value().node)), ENOENT);
}

TEST_F(MountCoreTest, ReadOnlyMountRefusesEveryMutation) {
  ASSERT_TRUE(model_.Mkdir(posix::kRootIno, "d", 0755, {}).ok());
  MountCore ro(&model_, posix::kRootIno, MountOptions{true});
  EXPECT_EQ(Err(ro.Mknod(kRootNode, "f", S_IFREG | 0644, 0, Caller{})), EROFS);
  EXPECT_EQ(Err(ro.Mkdir(kRootNode, "e", 0755, Caller{})), EROFS);
  EXPECT_EQ(Err(ro.Rmdir(kRootNode, "d")), EROFS);
  EXPECT_EQ(Err(ro.Rename(kRootNode, "d", kRootNode, "x", 0)), EROFS);
  EXPECT_EQ(Err(ro.SetXattr(kRootNode, "user.a", "1", 0)), EROFS);
  posix::SetAttrRequest chmod;
  chmod.mode = 0700;
  EXPECT_EQ(Err(ro.SetAttr(kRootNode, chmod)), EROFS);
  EXPECT_TRUE(ro.Lookup(kRootNode, "d").ok());
}

TEST_F(MountCoreTest, SubdirectoryMountSwapsNodeIdOne) {
  Result<posix::Attr> sub = model_.Mkdir(posix::kRootIno, "sub", 0755, {});
  ASSERT_TRUE(sub.ok());
  MountCore core(&model_, sub.value().ino, MountOptions{});
  EXPECT_EQ(core.NodeOf(sub.value().ino), kRootNode);
  EXPECT_EQ(core.InoOf(kRootNode), sub.value().ino);
  EXPECT_EQ(core.NodeOf(posix::kRootIno), sub.value().ino.value());
  Result<NodeAttr> f = core.Mknod(kRootNode, "f", S_IFREG | 0644, 0, Caller{});
  ASSERT_TRUE(f.ok());
  EXPECT_TRUE(model_.Lookup(sub.value().ino, "f").ok());  // created in the subdirectory
  Result<NodeAttr> root = core.GetAttr(kRootNode);
  ASSERT_TRUE(root.ok());
  EXPECT_EQ(root.value().attr.ino, sub.value().ino);  // st_ino stays the disk's
}

// A directory listed whole from its start and listed again at once (`rm -rf` reads one page of
// each directory, closes it and lists it again) is answered from the last listing, once, without
// attributes; a change of names since, or a read-only mount, asks the disk.
TEST(MountCoreListingEnds, AListingAgainAtOnceIsAnsweredFromTheLastOne) {
  ListingModel model{&SystemClock::Instance(), 0755};
  MountCore core{&model, posix::kRootIno, MountOptions{}};
  for (const char* n : {"a", "b"}) ASSERT_TRUE(core.Mknod(kRootNode, n, S_IFREG, 0, {}).ok());
  auto names = [](const std::vector<DirItem>& items) {
    std::vector<std::string> out;
    for (const DirItem& i : items) out.push_back(i.name + (i.attr ? "+" : ""));
    return out;
  };
  bool eof = false;
  Result<std::vector<DirItem>> first = core.ReadDir(kRootNode, 0, 100, &eof, /*plus=*/true);
  ASSERT_TRUE(first.ok() && eof);
  EXPECT_EQ(names(*first), (std::vector<std::string>{".", "..", "a+", "b+"}));
  EXPECT_EQ(model.listings, 1);
  eof = false;
  Result<std::vector<DirItem>> again = core.ReadDir(kRootNode, 0, 100, &eof, /*plus=*/true);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(eof);
  EXPECT_EQ(names(*again), (std::vector<std::string>{".", "..", "a", "b"}));
  EXPECT_EQ(again->back().offset, first->back().offset);
  EXPECT_EQ(model.listings, 1);
  EXPECT_EQ(core.stats().local_listings, 1u);
  EXPECT_TRUE(core.ReadDir(kRootNode, again->back().offset, 100, &eof)->empty())
      << "its end is known too";
  EXPECT_EQ(model.listings, 1);
  ASSERT_TRUE(core.ReadDir(kRootNode, 0, 100, &eof).ok());
  EXPECT_EQ(model.listings, 2) << "used once";
  ASSERT_TRUE(core.ReadDir(kRootNode, 0, 1, &eof).ok());
  EXPECT_EQ(model.listings, 2) << "\".\" alone: no listing asked for";
  ASSERT_TRUE(core.ReadDir(kRootNode, 0, 3, &eof).ok());
  EXPECT_EQ(model.listings, 3) << "a smaller page than the listing: asked";

  ASSERT_TRUE(core.ReadDir(kRootNode, 0, 100, &eof).ok());
  EXPECT_EQ(model.listings, 3) << "the whole listing before the smaller page is still good";
  ASSERT_TRUE(core.ReadDir(kRootNode, 0, 100, &eof).ok());
  EXPECT_EQ(model.listings, 4);
  ASSERT_TRUE(core.Mknod(kRootNode, "c", S_IFREG, 0, {}).ok());
  Result<std::vector<DirItem>> changed = core.ReadDir(kRootNode, 0, 100, &eof);
  ASSERT_TRUE(changed.ok());
  EXPECT_EQ(model.listings, 5) << "a name changed since";
  EXPECT_EQ(changed->size(), 5u);

  ListingModel ro_model{&SystemClock::Instance(), 0755};
  MountCore ro{&ro_model, posix::kRootIno, MountOptions{.read_only = true}};
  ASSERT_TRUE(ro.ReadDir(kRootNode, 0, 100, &eof).ok());
  ASSERT_TRUE(ro.ReadDir(kRootNode, 0, 100, &eof).ok());
  EXPECT_EQ(ro_model.listings, 2);
}

TEST_F(MountCoreTest, ReadDirResumesAtEveryOffset) {
  std::set<std::string> made;
  for (int i = 0; i < 50; ++i) {
    std::string name = "f" + std::to_string(i);
    ASSERT_TRUE(core_.Mknod(kRootNode, name, S_IFREG | 0644, 0, Caller{}).ok());
    made.insert(name);
  }
  // Pages of 7: every name once, "." and ".." first.
  std::vector<std::string> seen;
  uint64_t offset = 0;
  bool eof = false;
  for (int pages = 0; !eof && pages < 100; ++pages) {
    Result<std::vector<DirItem>> r = core_.ReadDir(kRootNode, offset, 7, &eof);
    ASSERT_TRUE(r.ok());
    if (r.value().empty()) break;
    for (const DirItem& item : r.value()) {
      seen.push_back(item.name);
      EXPECT_GT(item.offset, offset);
      offset = item.offset;
    }
  }
  ASSERT_GE(seen.size(), 2u);
  EXPECT_EQ(seen[0], ".");
  EXPECT_EQ(seen[1], "..");
  std::set<std::string> names(seen.begin() + 2, seen.end());
  EXPECT_EQ(names, made);
  EXPECT_EQ(seen.size(), made.size() + 2);
}

TEST_F(MountCoreTest, ReadDirPlusGivesEachEntrysAttributes) {
  ASSERT_TRUE(core_.Mknod(kRootNode, "f", S_IFREG | 0640, 0, Caller{1000, 100}).ok());
  Result<NodeAttr> d = core_.Mkdir(kRootNode, "d", 02750, Caller{1001, 101});
  ASSERT_TRUE(d.ok());
  bool eof = false;
  Result<std::vector<DirItem>> r = core_.ReadDir(kRootNode, 0, 100, &eof, /*plus=*/true);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(eof);
  ASSERT_EQ(r.value().size(), 4u);
  for (const DirItem& item : r.value()) {
    if (item.name == "." || item.name == "..") {
      EXPECT_FALSE(item.attr) << item.name;  // the kernel never links them
      continue;
    }
    ASSERT_TRUE(item.attr) << item.name;
    EXPECT_EQ(item.attr->attr.ino.value(), item.ino);
    EXPECT_EQ(item.attr->node, core_.NodeOf(item.attr->attr.ino));
    if (item.name == "f") {
      EXPECT_EQ(item.attr->attr.mode, S_IFREG | 0640u);
      EXPECT_EQ(item.attr->attr.uid, 1000u);
    } else {
      EXPECT_EQ(item.attr->attr.mode & 07777, 02750u);
      EXPECT_EQ(item.attr->attr.gid, 101u);
    }
  }
  // Without plus, no attributes.
  r = core_.ReadDir(kRootNode, 0, 100, &eof);
  ASSERT_TRUE(r.ok());
  for (const DirItem& item : r.value()) EXPECT_FALSE(item.attr) << item.name;
}

// Counts the requests that reach the disk for the capability probe.
class CountingFs : public posix::ModelFs {
 public:
  using ModelFs::ModelFs;
  Result<std::string> GetXattr(posix::Ino ino, std::string_view name) override {
    ++getxattrs;
    return ModelFs::GetXattr(ino, name);
  }
  Result<posix::Attr> Lookup(posix::Ino parent, std::string_view name) override {
    ++lookups;
    return ModelFs::Lookup(parent, name);
  }
  Result<posix::Attr> LookupSeen(posix::Ino parent, std::string_view name,
                                 posix::Ino ino) override {
    seen.push_back(ino);
    return ModelFs::LookupSeen(parent, name, ino);
  }
  int getxattrs = 0;
  int lookups = 0;
  std::vector<posix::Ino> seen;  // the inodes LookupSeen was told
};

TEST(MountCoreCaps, CapabilityProbeAsksTheDiskOncePerInode) {
  CountingFs model(&SystemClock::Instance(), 0755);
  MountCore core(&model, posix::kRootIno, MountOptions{});
  // A file made elsewhere: the first probe asks, the others do not.
  ASSERT_TRUE(model.Mknod(posix::kRootIno, "g", S_IFREG | 0644, 0, posix::Owner{}).ok());
  Result<NodeAttr> g = core.Lookup(kRootNode, "g");
  ASSERT_TRUE(g.ok());
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(Err(core.GetXattr(g.value().node, "security.capability")), ENODATA);
  }
  EXPECT_EQ(model.getxattrs, 1);
  // A file this mount created has none: no probe asks.
  Result<NodeAttr> f = core.Mknod(kRootNode, "f", S_IFREG | 0755, 0, Caller{});
  ASSERT_TRUE(f.ok());
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(Err(core.GetXattr(f.value().node, "security.capability")), ENODATA);
  }
  EXPECT_EQ(model.getxattrs, 1);
  // Set through this mount: seen at once; removed: absent again without asking.
  ASSERT_TRUE(core.SetXattr(f.value().node, "security.capability", "caps", 0).ok());
  Result<std::string> v = core.GetXattr(f.value().node, "security.capability");
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v.value(), "caps");
  ASSERT_TRUE(core.RemoveXattr(f.value().node, "security.capability").ok());
  const int before = model.getxattrs;
  EXPECT_EQ(Err(core.GetXattr(f.value().node, "security.capability")), ENODATA);
  EXPECT_EQ(model.getxattrs, before);
  // Other names always go to the disk.
  EXPECT_EQ(Err(core.GetXattr(f.value().node, "user.x")), ENODATA);
  EXPECT_EQ(Err(core.GetXattr(f.value().node, "user.x")), ENODATA);
  EXPECT_EQ(model.getxattrs, before + 2);
}

TEST(MountCoreKnownNames, ANameNotInADirectoryThisMountCreatedCostsNoRequest) {
  CountingFs model(&SystemClock::Instance(), 0755);
  MountCore core(&model, posix::kRootIno, MountOptions{});
  Result<NodeAttr> d = core.Mkdir(kRootNode, "d", 0755, Caller{});
  ASSERT_TRUE(d.ok());
  const NodeId dir = d.value().node;
  int asked = model.lookups;
  EXPECT_EQ(Err(core.Lookup(dir, "f")), ENOENT);
  EXPECT_EQ(model.lookups, asked);
  ASSERT_TRUE(core.Mknod(dir, "f", S_IFREG | 0644, 0, Caller{}).ok());
  EXPECT_TRUE(core.Lookup(dir, "f").ok());
  EXPECT_EQ(model.lookups, asked + 1);
  ASSERT_TRUE(core.Unlink(dir, "f").ok());
  asked = model.lookups;
  EXPECT_EQ(Err(core.Lookup(dir, "f")), ENOENT);
  EXPECT_EQ(model.lookups, asked);
  EXPECT_EQ(core.stats().local_negative_lookups, 2u);
  EXPECT_EQ(core.stats().known_dirs, 1u);
  // A rename between two names of one inode leaves both (rename(2)): the source is still asked.
  Result<NodeAttr> g = core.Mknod(dir, "g", S_IFREG | 0644, 0, Caller{});
  ASSERT_TRUE(g.ok());
  ASSERT_TRUE(core.Link(g.value().node, dir, "h").ok());
  ASSERT_TRUE(core.Rename(dir, "g", dir, "h", 0).ok());
  EXPECT_TRUE(core.Lookup(dir, "g").ok());
  EXPECT_TRUE(core.Lookup(dir, "h").ok());  // d; the root was not created by this mount
}

// A lookup of a name the mount saw naming an inode tells the file system which inode (it may
// answer without asking); a name whose inode gained a link, was removed, or "..", does not.
TEST(MountCoreLastNames, ALookupOfANameSeenSaysWhichInodeItNames) {
  CountingFs model(&SystemClock::Instance(), 0755);
  MountCore core(&model, posix::kRootIno, MountOptions{});
  Result<NodeAttr> d = core.Mkdir(kRootNode, "d", 0755, Caller{});
  ASSERT_TRUE(d.ok());
  Result<NodeAttr> f = core.Mknod(d->node, "f", S_IFREG | 0644, 0, Caller{});
  ASSERT_TRUE(f.ok());
  Result<NodeAttr> again = core.Lookup(kRootNode, "d");  // mkdir -p d: EEXIST after it
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->node, d->node);
  ASSERT_TRUE(core.Lookup(d->node, "f").ok());
  EXPECT_EQ(model.seen, (std::vector<posix::Ino>{d->attr.ino, f->attr.ino}));
  ASSERT_TRUE(core.Rename(d->node, "f", d->node, "g", 0).ok());
  ASSERT_TRUE(core.Lookup(d->node, "g").ok());
  EXPECT_EQ(model.seen.back(), f->attr.ino);
  EXPECT_EQ(model.seen.size(), 3u);
  ASSERT_TRUE(core.Link(f->node, d->node, "h").ok());  // two names: neither is kept
  ASSERT_TRUE(core.Lookup(d->node, "g").ok());
  ASSERT_TRUE(core.Lookup(d->node, "h").ok());
  (void)core.Lookup(d->node, "..");  // the model refuses it; never a seen name either way
  EXPECT_EQ(model.seen.size(), 3u);
  ASSERT_TRUE(core.Unlink(d->node, "g").ok());
  ASSERT_TRUE(core.Unlink(d->node, "h").ok());
  ASSERT_TRUE(core.Rmdir(kRootNode, "d").ok());
  const size_t seen = model.seen.size();
  EXPECT_EQ(Err(core.Lookup(kRootNode, "d")), ENOENT);
  EXPECT_EQ(model.seen.size(), seen);
}

TEST(MountCoreHolds, ARemovalAsksWhoItRemovesOnlyWhileSomethingIsOpenAndTheNameIsUnseen) {
  CountingFs model(&SystemClock::Instance(), 0755);
  MountCore core(&model, posix::kRootIno, MountOptions{});
  for (const char* n : {"a", "b", "c"}) {
    ASSERT_TRUE(core.Mknod(kRootNode, n, S_IFREG | 0644, 0, Caller{}).ok());
  }
  ASSERT_TRUE(core.Mkdir(kRootNode, "d", 0755, Caller{}).ok());
  core.OpenDir(kRootNode);  // rm -rf: the directory it lists is open while it unlinks
  int asked = model.lookups;
  ASSERT_TRUE(core.Unlink(kRootNode, "a").ok());
  EXPECT_EQ(model.lookups, asked);
  // An rmdir while a directory is open needs the victim's number (it may be the open one): the
  // mount made d, so it knows it without asking.
  ASSERT_TRUE(core.Rmdir(kRootNode, "d").ok());
  EXPECT_EQ(model.lookups, asked);
  ASSERT_TRUE(model.Mkdir(posix::kRootIno, "unseen", 0755, {}).ok());
  ASSERT_TRUE(core.Rmdir(kRootNode, "unseen").ok());
  EXPECT_EQ(model.lookups, asked + 1) << "a name the mount never saw is asked";
  // A file open: the next unlink checks the victim, and holds it if it is that file.
  uint64_t handle = 0;
  Result<NodeAttr> f = core.Create(kRootNode, "f", 0644, Caller{}, &handle);
  ASSERT_TRUE(f.ok());
  asked = model.lookups;
  ASSERT_TRUE(core.Unlink(kRootNode, "b").ok());
  EXPECT_EQ(model.lookups, asked) << "b's number was seen";
  ASSERT_TRUE(model.Mknod(posix::kRootIno, "e", S_IFREG | 0644, 0, {}).ok());
  ASSERT_TRUE(core.Unlink(kRootNode, "e").ok());
  EXPECT_EQ(model.lookups, asked + 1);
  EXPECT_EQ(core.stats().held_orphans, 0u);
  ASSERT_TRUE(core.Unlink(kRootNode, "f").ok());
  EXPECT_EQ(core.stats().held_orphans, 1u);
  ASSERT_TRUE(core.Release(f.value().node).ok());
  ASSERT_TRUE(core.Release(kRootNode).ok());
  EXPECT_EQ(core.stats().open_files, 0u);
  asked = model.lookups;
  ASSERT_TRUE(core.Unlink(kRootNode, "c").ok());
  EXPECT_EQ(model.lookups, asked);
}

// Random namespace changes through the mount in directories it created, and some made beside it
// in directories it did not: every lookup through the mount answers as the disk does.
TEST(MountCoreKnownNames, EveryLookupAnswersAsTheDiskDoes) {
  const unsigned seed = TestSeed();
  SCOPED_TRACE(SeedTrace(seed));
  std::mt19937 rng(seed);
  posix::ModelFs model(&SystemClock::Instance(), 0755);
  MountCore core(&model, posix::kRootIno, MountOptions{});
  std::vector<NodeId> dirs{kRootNode};
  const std::vector<std::string> names{"a", "b", "c", "d"};
  auto any = [&](const auto& v) { return v[rng() % v.size()]; };
  for (int step = 0; step < 3000; ++step) {
    const NodeId p = any(dirs);
    const std::string n = any(names);
    switch (rng() % 7) {
      case 0:  // few directories, so that names meet often
        if (dirs.size() > 6) break;
        if (Result<NodeAttr> r = core.Mkdir(p, n, 0755, Caller{}); r.ok()) {
          dirs.push_back(r.value().node);
        }
        break;
      case 1:
        (void)core.Mknod(p, n, S_IFREG | 0644, 0, Caller{});
        break;
      case 2:
        (void)core.Unlink(p, n);
        break;
      case 3:
        (void)core.Rmdir(p, n);
        break;
      case 4:
        (void)core.Rename(p, n, rng() % 2 ? p : any(dirs), any(names), rng() % 3);
        break;
      case 5: {
        Result<NodeAttr> f = core.Lookup(p, n);
        if (f.ok() && !S_ISDIR(f.value().attr.mode))
          (void)core.Link(f.value().node, any(dirs), any(names));
        break;
      }
      case 6:  // the disk changed beside the mount, in the root only (which it did not create)
        (void)model.Mknod(core.InoOf(kRootNode), n, S_IFREG | 0644, 0, posix::Owner{});
        break;
    }
    for (NodeId dir : dirs) {
      for (const std::string& name : names) {
        Result<posix::Attr> want = model.Lookup(core.InoOf(dir), name);
        Result<NodeAttr> got = core.Lookup(dir, name);
        const int want_errno = want.ok() ? 0 : ErrnoFor(want.status());
        if (want_errno == ENOENT || want_errno == 0) {
          ASSERT_EQ(Err(got), want_errno) << "step " << step << " dir " << dir << " " << name;
        }
      }
    }
  }
  EXPECT_GT(core.stats().local_negative_lookups, 0u);
}

}  // namespace
}  // namespace archil::fs
