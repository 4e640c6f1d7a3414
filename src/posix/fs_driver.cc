#include "posix/fs_driver.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <map>

namespace archil::posix {
namespace {

using Kind = FsOp::Kind;

const char* KindName(Kind k) {
  switch (k) {
    case Kind::kCreate:
      return "create";
    case Kind::kMkdir:
      return "mkdir";
    case Kind::kSymlink:
      return "symlink";
    case Kind::kLink:
      return "link";
    case Kind::kUnlink:
      return "unlink";
    case Kind::kRmdir:
      return "rmdir";
    case Kind::kRename:
      return "rename";
    case Kind::kWrite:
      return "write";
    case Kind::kTruncate:
      return "truncate";
    case Kind::kFallocate:
      return "fallocate";
    case Kind::kSetXattr:
      return "setxattr";
    case Kind::kRemoveXattr:
      return "removexattr";
    case Kind::kChmod:
      return "chmod";
    case Kind::kChown:
      return "chown";
    case Kind::kUtimens:
      return "utimens";
    case Kind::kOpen:
      return "open";
    case Kind::kRelease:
      return "release";
    case Kind::kRead:
      return "read";
  }
  return "?";
}

// "a/b/c" -> ("a/b", "c"); "c" -> ("", "c").
std::pair<std::string, std::string> SplitPath(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return {"", path};
  return {path.substr(0, slash), path.substr(slash + 1)};
}

int Errno(const Status& s) { return ErrnoFor(s); }

// The inode an op works on: its handle if it names one, else its path.
Result<Ino> Target(FileSystem* fs, const FsOp& op, const std::vector<Ino>& handles) {
  if (op.handle >= 0) {
    if (static_cast<size_t>(op.handle) >= handles.size()) {
      return Status::Errno(EBADF, "no open handle " + std::to_string(op.handle));
    }
    return handles[static_cast<size_t>(op.handle)];
  }
  ARCHIL_ASSIGN_OR_RETURN(Attr a, ResolvePath(fs, op.path));
  return a.ino;
}

Status Run(FileSystem* fs, const FsOp& op, std::vector<Ino>* handles, std::string* data) {
  const Owner owner{0, 0};
  auto [dir, base] = SplitPath(op.path);
  switch (op.kind) {
    case Kind::kCreate: {
      ARCHIL_ASSIGN_OR_RETURN(Attr p, ResolvePath(fs, dir));
      return fs->Mknod(p.ino, base, S_IFREG | (op.mode & 07777), 0, owner).status();
    }
    case Kind::kMkdir: {
      ARCHIL_ASSIGN_OR_RETURN(Attr p, ResolvePath(fs, dir));
      return fs->Mkdir(p.ino, base, op.mode & 07777, owner).status();
    }
    case Kind::kSymlink: {
      ARCHIL_ASSIGN_OR_RETURN(Attr p, ResolvePath(fs, dir));
      return fs->Symlink(p.ino, base, op.path2, owner).status();
    }
    case Kind::kLink: {
      ARCHIL_ASSIGN_OR_RETURN(Attr a, ResolvePath(fs, op.path));
      auto [dir2, base2] = SplitPath(op.path2);
      ARCHIL_ASSIGN_OR_RETURN(Attr p, ResolvePath(fs, dir2));
      return fs->Link(a.ino, p.ino, base2).status();
    }
    case Kind::kUnlink:
    case Kind::kRmdir: {
      ARCHIL_ASSIGN_OR_RETURN(Attr p, ResolvePath(fs, dir));
      return op.kind == Kind::kUnlink ? fs->Unlink(p.ino, base) : fs->Rmdir(p.ino, base);
    }
    case Kind::kRename: {
      ARCHIL_ASSIGN_OR_RETURN(Attr p, ResolvePath(fs, dir));
      auto [dir2, base2] = SplitPath(op.path2);
      ARCHIL_ASSIGN_OR_RETURN(Attr p2, ResolvePath(fs, dir2));
      return fs->Rename(p.ino, base, p2.ino, base2, op.mode);
    }
    case Kind::kWrite: {
      ARCHIL_ASSIGN_OR_RETURN(Ino ino, Target(fs, op, *handles));
      return fs->Write(ino, op.offset, std::string(op.length, static_cast<char>(op.id))).status();
    }
    case Kind::kTruncate: {
      ARCHIL_ASSIGN_OR_RETURN(Ino ino, Target(fs, op, *handles));
      SetAttrRequest r;
      r.size = op.length;
      return fs->SetAttr(ino, r).status();
    }
    case Kind::kFallocate: {
      ARCHIL_ASSIGN_OR_RETURN(Ino ino, Target(fs, op, *handles));
      return fs->Fallocate(ino, op.mode, op.offset, op.length);
    }
    case Kind::kSetXattr: {
      ARCHIL_ASSIGN_OR_RETURN(Ino ino, Target(fs, op, *handles));
      std::string value(op.length, static_cast<char>('a' + op.id % 26));
      return fs->SetXattr(ino, op.name, value, op.mode);
    }
    case Kind::kRemoveXattr: {
      ARCHIL_ASSIGN_OR_RETURN(Ino ino, Target(fs, op, *handles));
      return fs->RemoveXattr(ino, op.name);
    }
    case Kind::kChmod:
    case Kind::kChown:
    case Kind::kUtimens: {
      ARCHIL_ASSIGN_OR_RETURN(Ino ino, Target(fs, op, *handles));
      SetAttrRequest r;
      if (op.kind == Kind::kChmod) r.mode = op.mode & 07777;
      if (op.kind == Kind::kChown) {
        r.uid = op.id;
        r.gid = op.id + 1;
      }
      if (op.kind == Kind::kUtimens) {
        r.atime = TimeUpdate::At({static_cast<int64_t>(op.offset), 0});
        r.mtime = TimeUpdate::At({static_cast<int64_t>(op.length), 0});
      }
      return fs->SetAttr(ino, r).status();
    }
    case Kind::kOpen: {
      ARCHIL_ASSIGN_OR_RETURN(Attr a, ResolvePath(fs, op.path));
      ARCHIL_RETURN_IF_ERROR(fs->Open(a.ino, HolderId(1)));
      handles->push_back(a.ino);
      return Status::Ok();
    }
    case Kind::kRelease: {
      ARCHIL_ASSIGN_OR_RETURN(Ino ino, Target(fs, op, *handles));
      ARCHIL_RETURN_IF_ERROR(fs->Release(ino, HolderId(1)));
      handles->erase(handles->begin() + op.handle);
      return Status::Ok();
    }
    case Kind::kRead: {
      ARCHIL_ASSIGN_OR_RETURN(Ino ino, Target(fs, op, *handles));
      ARCHIL_ASSIGN_OR_RETURN(*data, fs->Read(ino, op.offset, op.length));
      return Status::Ok();
    }
  }
  return Status::Internal("unknown op");
}

// Every path below `dir` ("" = root), directories first in each level.
void Walk(FileSystem* fs, Ino dir, const std::string& prefix, bool dirs_only,
          std::vector<std::string>* out) {
  uint64_t cookie = 0;
  for (;;) {
    Result<DirPage> page = fs->ReadDir(dir, cookie, 256);
    if (!page.ok()) return;
    for (const DirEntry& e : page->entries) {
      std::string path = prefix.empty() ? e.name : prefix + "/" + e.name;
      bool is_dir = S_ISDIR(e.type);
      if (is_dir || !dirs_only) out->push_back(path);
      if (is_dir) Walk(fs, e.ino, path, dirs_only, out);
      cookie = e.cookie;
    }
    if (page->eof) return;
  }
}

Result<std::map<std::string, DirEntry>> AllEntries(FileSystem* fs, Ino dir) {
  std::map<std::string, DirEntry> out;
  uint64_t cookie = 0;
  for (;;) {
    ARCHIL_ASSIGN_OR_RETURN(DirPage page, fs->ReadDir(dir, cookie, 100));
    for (DirEntry& e : page.entries) {
      cookie = e.cookie;
      std::string name = e.name;
      if (!out.emplace(name, std::move(e)).second) {
        return Status::Internal("readdir returned '" + name + "' twice");
      }
    }
    if (page.eof) return out;
  }
}

Status Differ(const std::string& path, const std::string& what, const std::string& a,
              const std::string& b) {
  return Status::Internal((path.empty() ? "/" : path) + ": " + what + " differs: " + a + " vs " +
                          b);
}

Status CompareNode(FileSystem* a, FileSystem* b, Ino ia, Ino ib, const std::string& path,
                   const CompareOptions& o) {
  ARCHIL_ASSIGN_OR_RETURN(Attr x, a->GetAttr(ia));
  ARCHIL_ASSIGN_OR_RETURN(Attr y, b->GetAttr(ib));
  auto num = [](uint64_t v) { return std::to_string(v); };
  if (x.mode != y.mode) return Differ(path, "mode", num(x.mode), num(y.mode));
  if (x.nlink != y.nlink) return Differ(path, "nlink", num(x.nlink), num(y.nlink));
  if (x.uid != y.uid || x.gid != y.gid) return Differ(path, "owner", num(x.uid), num(y.uid));
  if (x.size != y.size) return Differ(path, "size", num(x.size), num(y.size));
  if (x.rdev != y.rdev) return Differ(path, "rdev", num(x.rdev), num(y.rdev));
  if (o.blocks && x.blocks != y.blocks) return Differ(path, "blocks", num(x.blocks), num(y.blocks));
  if (o.times && (x.mtime != y.mtime || x.ctime != y.ctime || x.atime != y.atime)) {
    return Differ(path, "times", num(x.mtime.sec), num(y.mtime.sec));
  }
  ARCHIL_ASSIGN_OR_RETURN(std::vector<std::string> xa, a->ListXattr(ia));
  ARCHIL_ASSIGN_OR_RETURN(std::vector<std::string> xb, b->ListXattr(ib));
  std::sort(xa.begin(), xa.end());
  std::sort(xb.begin(), xb.end());
  if (xa != xb) return Differ(path, "xattr names", num(xa.size()), num(xb.size()));
  for (const std::string& name : xa) {
    ARCHIL_ASSIGN_OR_RETURN(std::string va, a->GetXattr(ia, name));
    ARCHIL_ASSIGN_OR_RETURN(std::string vb, b->GetXattr(ib, name));
    if (va != vb) return Differ(path, "xattr " + name, num(va.size()), num(vb.size()));
  }
  if (S_ISLNK(x.mode)) {
    ARCHIL_ASSIGN_OR_RETURN(std::string ta, a->Readlink(ia));
    ARCHIL_ASSIGN_OR_RETURN(std::string tb, b->Readlink(ib));
    if (ta != tb) return Differ(path, "symlink target", ta, tb);
  }
  if (S_ISREG(x.mode)) {
    // Every byte of the first 64 MiB and of the last 2 MiB; in between (sparse files of several
    // GiB: the generator writes past 4 GiB), one 1 MiB window every 64 MiB, so that a comparison
    // stays cheap enough to run after every few operations.
    constexpr uint64_t kStep = 1 << 20, kDense = 64 << 20;
    for (uint64_t off = 0; off < x.size;) {
      ARCHIL_ASSIGN_OR_RETURN(std::string da, a->Read(ia, off, kStep));
      ARCHIL_ASSIGN_OR_RETURN(std::string db, b->Read(ib, off, kStep));
      if (da != db) {
        size_t i = 0;
        while (i < da.size() && i < db.size() && da[i] == db[i]) ++i;
        return Differ(path, "data at byte " + num(off + i), num(da.size()), num(db.size()));
      }
      uint64_t tail = x.size > 2 * kStep ? (x.size - 2 * kStep) / kStep * kStep : 0;
      uint64_t next = off + kStep;
      if (next >= kDense && next < tail) next = std::min(tail, next + kDense - kStep);
      off = next;
    }
  }
  if (S_ISDIR(x.mode)) {
    ARCHIL_ASSIGN_OR_RETURN(auto ea, AllEntries(a, ia));
    ARCHIL_ASSIGN_OR_RETURN(auto eb, AllEntries(b, ib));
    for (const auto& [name, e] : ea) {
      if (!eb.count(name)) return Differ(path, "entry '" + name + "'", "present", "absent");
    }
    for (const auto& [name, e] : eb) {
      if (!ea.count(name)) return Differ(path, "entry '" + name + "'", "absent", "present");
    }
    for (const auto& [name, e] : ea) {
      if ((e.type & S_IFMT) != (eb.at(name).type & S_IFMT)) {
        return Differ(path + "/" + name, "entry type", num(e.type), num(eb.at(name).type));
      }
      std::string child = path.empty() ? name : path + "/" + name;
      ARCHIL_RETURN_IF_ERROR(CompareNode(a, b, e.ino, eb.at(name).ino, child, o));
    }
  }
  return Status::Ok();
}

}  // namespace

std::string Describe(const FsOp& op) {
  std::string s = KindName(op.kind);
  if (op.handle >= 0) {
    s += " #" + std::to_string(op.handle);
  } else {
    s += " " + (op.path.empty() ? std::string("/") : op.path);
  }
  if (!op.path2.empty()) s += " -> " + op.path2;
  if (!op.name.empty()) s += " " + op.name;
  s += " off " + std::to_string(op.offset) + " len " + std::to_string(op.length) + " mode " +
       std::to_string(op.mode) + " id " + std::to_string(op.id);
  return s;
}

Result<Attr> ResolvePath(FileSystem* fs, const std::string& path) {
  ARCHIL_ASSIGN_OR_RETURN(Attr a, fs->GetAttr(kRootIno));
  size_t pos = 0;
  while (pos < path.size()) {
    size_t slash = path.find('/', pos);
    if (slash == std::string::npos) slash = path.size();
    ARCHIL_ASSIGN_OR_RETURN(a, fs->Lookup(a.ino, path.substr(pos, slash - pos)));
    pos = slash + 1;
  }
  return a;
}

FsOutcome Apply(FileSystem* fs, const FsOp& op, std::vector<Ino>* handles) {
  FsOutcome out;
  out.err = Errno(Run(fs, op, handles, &out.data));
  return out;
}

std::string FsOpGenerator::RandomExistingPath(FileSystem* view, bool dirs_only) {
  std::vector<std::string> paths;
  Walk(view, kRootIno, "", dirs_only, &paths);
  if (dirs_only) paths.emplace_back();
  if (paths.empty()) return "a";
  return paths[rng_() % paths.size()];
}

std::string FsOpGenerator::RandomNewPath(FileSystem* view) {
  static const char* const kNames[] = {"a", "b", "c", "d", "e", "f"};
  std::string dir = RandomExistingPath(view, true);
  std::string name = kNames[rng_() % 6];
  return dir.empty() ? name : dir + "/" + name;
}

FsOp FsOpGenerator::Next(FileSystem* view, size_t open_handles) {
  FsOp op;
  auto pick = [&](uint64_t n) { return rng_() % n; };
  // Weights: data operations dominate, namespace changes are frequent, the rest sprinkled.
  uint64_t r = pick(100);
  auto existing = [&] {
    return pick(10) == 0 ? RandomNewPath(view) : RandomExistingPath(view, false);
  };
  auto use_handle = [&] {
    if (open_handles > 0 && pick(3) == 0) op.handle = static_cast<int>(pick(open_handles));
  };
  if (r < 10) {
    op.kind = Kind::kCreate;
    op.path = RandomNewPath(view);
    op.mode = pick(2) ? 0644 : 06755;
  } else if (r < 16) {
    op.kind = Kind::kMkdir;
    op.path = RandomNewPath(view);
    op.mode = 0755;
  } else if (r < 18) {
    op.kind = Kind::kSymlink;
    op.path = RandomNewPath(view);
    op.path2 = pick(2) ? "target" : std::string(1 + pick(300), 't');
  } else if (r < 21) {
    op.kind = Kind::kLink;
    op.path = existing();
    op.path2 = RandomNewPath(view);
  } else if (r < 27) {
    op.kind = Kind::kUnlink;
    op.path = existing();
  } else if (r < 30) {
    op.kind = Kind::kRmdir;
    op.path = pick(4) ? RandomExistingPath(view, true) : existing();
    if (op.path.empty()) op.path = "a";
  } else if (r < 37) {
    op.kind = Kind::kRename;
    op.path = existing();
    op.path2 = pick(2) ? RandomNewPath(view) : RandomExistingPath(view, false);
    uint64_t f = pick(10);
    op.mode = f == 0 ? kRenameNoReplace : f == 1 ? kRenameExchange : 0;
  } else if (r < 62) {
    op.kind = Kind::kWrite;
    op.path = existing();
    use_handle();
    // Mostly block-aligned small writes, some unaligned, some large (> 64 KiB), rarely far out.
    uint64_t shape = pick(10);
    uint64_t block = pick(64);
    op.offset = shape < 6 ? block * kBlockSize : block * kBlockSize + pick(kBlockSize);
    op.length = shape < 6 ? kBlockSize * (1 + pick(4)) : 1 + pick(3 * kBlockSize);
    if (shape == 8) op.length = (64 + pick(256)) * 1024;
    if (shape == 9 && pick(10) == 0) op.offset = (uint64_t{4} << 30) + pick(1 << 20);
    op.id = static_cast<uint32_t>(1 + pick(255));
  } else if (r < 68) {
    op.kind = Kind::kTruncate;
    op.path = existing();
    use_handle();
    op.length = pick(2) ? pick(64) * kBlockSize : pick(300000);
  } else if (r < 72) {
    op.kind = Kind::kFallocate;
    op.path = existing();
    use_handle();
    static const uint32_t kModes[] = {0,
                                      kFallocKeepSize,
                                      kFallocPunchHole | kFallocKeepSize,
                                      kFallocZeroRange,
                                      kFallocZeroRange | kFallocKeepSize,
                                      kFallocPunchHole};
    op.mode = kModes[pick(6)];
    op.offset = pick(64) * kBlockSize + (pick(4) == 0 ? pick(kBlockSize) : 0);
    op.length = pick(16) * kBlockSize + (pick(4) == 0 ? pick(kBlockSize) : 0);
  } else if (r < 77) {
    op.kind = Kind::kSetXattr;
    op.path = existing();
    static const char* const kXattrs[] = {
        "user.a", "user.b", "trusted.t", "security.s", "system.posix_acl_access", "bad.ns"};
    op.name = kXattrs[pick(6)];
    op.length = pick(10) == 0 ? 70000 : pick(200);
    op.id = static_cast<uint32_t>(pick(26));
    uint64_t f = pick(4);
    op.mode = f == 0 ? kXattrCreate : f == 1 ? kXattrReplace : 0;
  } else if (r < 79) {
    op.kind = Kind::kRemoveXattr;
    op.path = existing();
    op.name = pick(2) ? "user.a" : "user.b";
  } else if (r < 82) {
    op.kind = Kind::kChmod;
    op.path = existing();
    op.mode = static_cast<uint32_t>(pick(010000));
  } else if (r < 84) {
    op.kind = Kind::kChown;
    op.path = existing();
    op.id = static_cast<uint32_t>(pick(3) * 1000);
  } else if (r < 86) {
    op.kind = Kind::kUtimens;
    op.path = existing();
    op.offset = pick(2000000000);
    op.length = pick(2000000000);
  } else if (r < 90) {
    op.kind = Kind::kOpen;
    op.path = existing();
  } else if (r < 93 && open_handles > 0) {
    op.kind = Kind::kRelease;
    op.handle = static_cast<int>(pick(open_handles));
  } else {
    op.kind = Kind::kRead;
    op.path = existing();
    use_handle();
    op.offset = pick(80) * kBlockSize + (pick(3) == 0 ? pick(kBlockSize) : 0);
    op.length = 1 + pick(5 * kBlockSize);
  }
  return op;
}

Status CompareTrees(FileSystem* a, FileSystem* b, const CompareOptions& options) {
  return CompareNode(a, b, kRootIno, kRootIno, "", options);
}

}  // namespace archil::posix
