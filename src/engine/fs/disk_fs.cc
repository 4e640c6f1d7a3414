#include "engine/fs/disk_fs.h"

#include <sys/stat.h>

#include <cerrno>

#include "base/coding.h"
#include "engine/fs/disk_fs_ops.h"

namespace archil::engine {

posix::Attr ToAttr(Ino ino, const InodeRecord& r) {
  auto ts = [](int64_t ns) {
    int64_t sec = ns / 1000000000, rem = ns % 1000000000;
    if (rem < 0) {
      rem += 1000000000;
      --sec;
    }
    return posix::Timespec{sec, static_cast<uint32_t>(rem)};
  };
  posix::Attr a;
  a.ino = ino;
  a.mode = r.mode;
  a.nlink = r.nlink;
  a.uid = r.uid;
  a.gid = r.gid;
  a.rdev = r.rdev;
  a.size = S_ISLNK(r.mode) ? r.symlink_target.size() : r.size;
  a.blocks = r.blocks * (kBlockSize / 512);
  a.atime = ts(r.atime);
  a.mtime = ts(r.mtime);
  a.ctime = ts(r.ctime);
  a.btime = ts(r.btime);
  return a;
}

namespace {

int64_t ToNs(posix::Timespec t) { return t.sec * 1000000000 + t.nsec; }

Status Exists(std::string_view name) {
  return Status::Errno(EEXIST, "'" + std::string(name) + "' exists");
}
Status NoEntry(std::string_view name) {
  return Status::Errno(ENOENT, "no entry '" + std::string(name) + "'");
}

}  // namespace

DiskFs::DiskFs(EngineCore* core, LevelRef view, const SipHashKey& dir_hash_key,
               uint32_t lineage_index, std::shared_ptr<const rocksdb::Snapshot> pinned)
    : core_(core),
      disk_(view.disk),
      view_(view),
      dir_hash_key_(dir_hash_key),
      lineage_index_(lineage_index),
      levels_(&core->cfs, core->lineages, view, lineage_index),
      pinned_(std::move(pinned)) {}

Status DiskFs::Writable() const {
  if (read_only()) return Status::Errno(EROFS, "a checkpoint or snapshot view is read-only");
  return Status::Ok();
}

Status DiskFs::Admit(uint64_t bytes) const {
  ARCHIL_RETURN_IF_ERROR(Writable());
  return core_->space ? core_->space->Admit(bytes) : Status::Ok();
}

Status DiskFs::Mutate(const CommitHooks& hooks, const Touched* touched,
                      const std::function<Status(Txn&)>& prepare) {
  return core_->queue->Commit(
      [&](Txn& t) -> Status {
        ARCHIL_RETURN_IF_ERROR(prepare(t));
        if (hooks.epilogue) hooks.epilogue(t, CommitResult{.touched = touched});
        return Status::Ok();
      },
      hooks.on_queued, hooks.sync);
}

Result<posix::Attr> DiskFs::MutateAttr(const CommitHooks& hooks, const Touched* touched,
                                       const std::function<Result<posix::Attr>(Txn&)>& prepare) {
  return core_->queue->CommitWith<posix::Attr>(
      [&](Txn& t) -> Result<posix::Attr> {
        Result<posix::Attr> r = prepare(t);
        if (r.ok() && hooks.epilogue) {
          hooks.epilogue(t, CommitResult{.attr = &r.value(), .touched = touched});
        }
        return r;
      },
      hooks.on_queued, hooks.sync);
}

Status DiskFs::Sync() { return core_->queue->Sync(); }

Result<posix::Attr> DiskFs::Lookup(posix::Ino parent, std::string_view name) {
  ARCHIL_RETURN_IF_ERROR(posix::ValidateName(name));
  Ops ops(this);
  DbView view = ReadView();
  ARCHIL_RETURN_IF_ERROR(ops.LoadDir(view, parent).status());
  ARCHIL_ASSIGN_OR_RETURN(std::optional<DentryRecord> d, ops.LoadDentry(view, parent, name));
  if (!d) return NoEntry(name);
  ARCHIL_ASSIGN_OR_RETURN(Inode n, ops.LoadInode(view, d->ino));
  return ToAttr(n.ino, n.rec);
}

Result<posix::Attr> DiskFs::GetAttr(posix::Ino ino) {
  Ops ops(this);
  DbView view = ReadView();
  ARCHIL_ASSIGN_OR_RETURN(Inode n, ops.LoadInode(view, ino));
  return ToAttr(n.ino, n.rec);
}

Result<posix::Attr> DiskFs::SetAttr(posix::Ino ino, const posix::SetAttrRequest& r) {
  return SetAttr(ino, r, CommitHooks{});
}

Result<posix::Attr> DiskFs::SetAttr(posix::Ino ino, const posix::SetAttrRequest& r,
                                    const CommitHooks& hooks) {
  ARCHIL_RETURN_IF_ERROR(Writable());
  if (r.mode && *r.mode > 07777) return Status::Errno(EINVAL, "mode beyond 07777");
  return MutateAttr(hooks, [&](Txn& t) -> Result<posix::Attr> {
    Ops ops(this);
    ARCHIL_ASSIGN_OR_RETURN(Inode n, ops.LoadInode(t, ino));
    if (r.size) {
      if (S_ISDIR(n.rec.mode)) return Status::Errno(EISDIR, "truncate of a directory");
      if (!S_ISREG(n.rec.mode)) return Status::Errno(EINVAL, "truncate of a special file");
      if (*r.size > posix::kMaxFileSize) return Status::Errno(EFBIG, "size beyond the maximum");
    }
    int64_t now = ops.NowNs();
    if (r.mode) n.rec.mode = (n.rec.mode & S_IFMT) | *r.mode;
    if (r.uid) n.rec.uid = *r.uid;
    if (r.gid) n.rec.gid = *r.gid;
    if (r.size && *r.size != n.rec.size) {
      ARCHIL_RETURN_IF_ERROR(ops.Resize(t, n, *r.size));
      n.rec.mtime = now;
    }
    auto apply = [&](const posix::TimeUpdate& u, int64_t* field) {
      if (u.kind == posix::TimeUpdate::Kind::kNow) *field = now;
      if (u.kind == posix::TimeUpdate::Kind::kValue) *field = ToNs(u.value);
    };
    apply(r.atime, &n.rec.atime);
    apply(r.mtime, &n.rec.mtime);
    n.rec.ctime = now;
    ARCHIL_RETURN_IF_ERROR(ops.PutInode(t, n));
    return ToAttr(n.ino, n.rec);
  });
}

// The shared body of Mknod, Mkdir and Symlink: a new inode of `mode` named `name` in `parent`;
// `fill` sets what is particular to its kind.
Result<posix::Attr> DiskFs::CreateNode(Ino parent, std::string_view name, uint32_t mode,
                                       posix::Owner owner, const CommitHooks& hooks,
                                       const std::function<void(Inode&)>& fill) {
  ARCHIL_RETURN_IF_ERROR(Admit(kBlockSize));
  ARCHIL_RETURN_IF_ERROR(posix::ValidateName(name));
  Touched touched;
  return MutateAttr(hooks, &touched, [&](Txn& t) -> Result<posix::Attr> {
    Ops ops(this);
    ARCHIL_ASSIGN_OR_RETURN(Inode dir, ops.LoadDir(t, parent));
    ARCHIL_ASSIGN_OR_RETURN(std::optional<DentryRecord> d, ops.LoadDentry(t, parent, name));
    if (d) return Exists(name);
    ARCHIL_ASSIGN_OR_RETURN(Ino ino, ops.AllocIno(t));
    Inode n = ops.NewInode(ino, mode, owner);
    fill(n);
    ARCHIL_RETURN_IF_ERROR(ops.PutInode(t, n));
    ARCHIL_RETURN_IF_ERROR(ops.PutDentry(t, parent, name, ino, n.rec.mode));
    if (S_ISDIR(mode)) dir.rec.nlink++;  // the new directory's ".."
    ops.Touch(dir);
    ARCHIL_RETURN_IF_ERROR(ops.PutInode(t, dir));
    touched.parent = ToAttr(dir.ino, dir.rec);
    return ToAttr(n.ino, n.rec);
  });
}

Result<posix::Attr> DiskFs::Mknod(posix::Ino parent, std::string_view name, uint32_t mode,
                                  uint32_t rdev, posix::Owner owner) {
  return Mknod(parent, name, mode, rdev, owner, CommitHooks{});
}

Result<posix::Attr> DiskFs::Mknod(posix::Ino parent, std::string_view name, uint32_t mode,
                                  uint32_t rdev, posix::Owner owner, const CommitHooks& hooks) {
  const uint32_t type = mode & S_IFMT;
  if (!MknodType(mode)) return Status::Errno(EINVAL, "mknod of an unsupported file type");
  return CreateNode(parent, name, type | (mode & 07777), owner, hooks, [&](Inode& n) {
    if (type == S_IFCHR || type == S_IFBLK) n.rec.rdev = rdev;
  });
}

Result<posix::Attr> DiskFs::Mkdir(posix::Ino parent, std::string_view name, uint32_t mode,
                                  posix::Owner owner) {
  return Mkdir(parent, name, mode, owner, CommitHooks{});
}

Result<posix::Attr> DiskFs::Mkdir(posix::Ino parent, std::string_view name, uint32_t mode,
                                  posix::Owner owner, const CommitHooks& hooks) {
  return CreateNode(parent, name, S_IFDIR | (mode & 07777), owner, hooks, [&](Inode& n) {
    n.rec.nlink = 2;
    n.rec.parent = parent;
  });
}

Result<posix::Attr> DiskFs::Symlink(posix::Ino parent, std::string_view name,
                                    std::string_view target, posix::Owner owner) {
  return Symlink(parent, name, target, owner, CommitHooks{});
}

Result<posix::Attr> DiskFs::Symlink(posix::Ino parent, std::string_view name,
                                    std::string_view target, posix::Owner owner,
                                    const CommitHooks& hooks) {
  if (target.empty()) return Status::Errno(ENOENT, "empty symlink target");
  if (target.size() > posix::kSymlinkMax) {
    return Status::Errno(ENAMETOOLONG, "symlink target too long");
  }
  return CreateNode(parent, name, S_IFLNK | 0777, owner, hooks, [&](Inode& n) {
    n.rec.symlink_target = std::string(target);
    n.rec.size = target.size();
  });
}

Result<posix::Attr> DiskFs::Link(posix::Ino ino, posix::Ino new_parent, std::string_view new_name) {
  return Link(ino, new_parent, new_name, CommitHooks{});
}

Result<posix::Attr> DiskFs::Link(posix::Ino ino, posix::Ino new_parent, std::string_view new_name,
                                 const CommitHooks& hooks) {
  ARCHIL_RETURN_IF_ERROR(Admit(kBlockSize));
  ARCHIL_RETURN_IF_ERROR(posix::ValidateName(new_name));
  Touched touched;
  return MutateAttr(hooks, &touched, [&](Txn& t) -> Result<posix::Attr> {
    Ops ops(this);
    ARCHIL_ASSIGN_OR_RETURN(Inode n, ops.LoadInode(t, ino));
    ARCHIL_ASSIGN_OR_RETURN(Inode dir, ops.LoadDir(t, new_parent));
    if (S_ISDIR(n.rec.mode)) return Status::Errno(EPERM, "hard link to a directory");
    if (n.rec.nlink == 0) return Status::Errno(ENOENT, "link to an unlinked inode");
    ARCHIL_ASSIGN_OR_RETURN(std::optional<DentryRecord> d, ops.LoadDentry(t, new_parent, new_name));
    if (d) return Exists(new_name);
    ARCHIL_RETURN_IF_ERROR(ops.PutDentry(t, new_parent, new_name, ino, n.rec.mode));
    n.rec.nlink++;
    n.rec.ctime = ops.NowNs();
    ARCHIL_RETURN_IF_ERROR(ops.PutInode(t, n));
    ops.Touch(dir);
    ARCHIL_RETURN_IF_ERROR(ops.PutInode(t, dir));
    touched.parent = ToAttr(dir.ino, dir.rec);
    return ToAttr(n.ino, n.rec);
  });
}

// The shared body of Unlink and Rmdir: `parent` and the inode its entry `name` names.
Result<std::pair<DiskFs::Inode, DiskFs::Inode>> DiskFs::LoadEntry(Txn& t, Ino parent,
                                                                  std::string_view name) {
  Ops ops(this);
  ARCHIL_ASSIGN_OR_RETURN(Inode dir, ops.LoadDir(t, parent));
  ARCHIL_ASSIGN_OR_RETURN(std::optional<DentryRecord> d, ops.LoadDentry(t, parent, name));
  if (!d) return NoEntry(name);
  ARCHIL_ASSIGN_OR_RETURN(Inode n, ops.LoadInode(t, d->ino));
  return std::make_pair(std::move(dir), std::move(n));
}

Status DiskFs::Unlink(posix::Ino parent, std::string_view name) {
  return Unlink(parent, name, CommitHooks{});
}

Status DiskFs::Unlink(posix::Ino parent, std::string_view name, const CommitHooks& hooks) {
  ARCHIL_RETURN_IF_ERROR(Writable());
  ARCHIL_RETURN_IF_ERROR(posix::ValidateName(name));
  Touched touched;
  return Mutate(hooks, &touched, [&](Txn& t) -> Status {
    touched = Touched{};
    Ops ops(this);
    ARCHIL_ASSIGN_OR_RETURN(auto entry, LoadEntry(t, parent, name));
    auto& [dir, n] = entry;
    if (S_ISDIR(n.rec.mode)) return Status::Errno(EISDIR, "unlink of a directory");
    ARCHIL_RETURN_IF_ERROR(ops.DeleteDentry(t, parent, name));
    ops.Touch(dir);
    ARCHIL_RETURN_IF_ERROR(ops.PutInode(t, dir));
    touched.parent = ToAttr(dir.ino, dir.rec);
    ARCHIL_RETURN_IF_ERROR(ops.DropLink(t, n, false, &touched.purged));
    touched.unlinked = ToAttr(n.ino, n.rec);
    return Status::Ok();
  });
}

Status DiskFs::Rmdir(posix::Ino parent, std::string_view name) {
  return Rmdir(parent, name, CommitHooks{});
}

Status DiskFs::Rmdir(posix::Ino parent, std::string_view name, const CommitHooks& hooks) {
  ARCHIL_RETURN_IF_ERROR(Writable());
  ARCHIL_RETURN_IF_ERROR(posix::ValidateName(name));
  Touched touched;
  return Mutate(hooks, &touched, [&](Txn& t) -> Status {
    touched = Touched{};
    Ops ops(this);
    ARCHIL_ASSIGN_OR_RETURN(auto entry, LoadEntry(t, parent, name));
    auto& [dir, n] = entry;
    if (!S_ISDIR(n.rec.mode)) return Status::Errno(ENOTDIR, "rmdir of a non-directory");
    ARCHIL_ASSIGN_OR_RETURN(bool empty, ops.DirIsEmpty(t, n.ino));
    if (!empty) return Status::Errno(ENOTEMPTY, "directory not empty");
    ARCHIL_RETURN_IF_ERROR(ops.DeleteDentry(t, parent, name));
    dir.rec.nlink--;
    ops.Touch(dir);
    ARCHIL_RETURN_IF_ERROR(ops.PutInode(t, dir));
    touched.parent = ToAttr(dir.ino, dir.rec);
    touched.removed_dir = n.ino;
    return ops.DropLink(t, n, true);
  });
}

Status DiskFs::Rename(posix::Ino parent, std::string_view name, posix::Ino new_parent,
                      std::string_view new_name, uint32_t flags) {
  return Rename(parent, name, new_parent, new_name, flags, CommitHooks{});
}

Status DiskFs::Rename(posix::Ino parent, std::string_view name, posix::Ino new_parent,
                      std::string_view new_name, uint32_t flags, const CommitHooks& hooks) {
  ARCHIL_RETURN_IF_ERROR(Admit(kBlockSize));
  using posix::kRenameExchange;
  using posix::kRenameNoReplace;
  if ((flags & ~(kRenameNoReplace | kRenameExchange)) != 0 ||
      flags == (kRenameNoReplace | kRenameExchange)) {
    return Status::Errno(EINVAL, "invalid rename flags");
  }
  ARCHIL_RETURN_IF_ERROR(posix::ValidateName(name));
  ARCHIL_RETURN_IF_ERROR(posix::ValidateName(new_name));
  Touched touched;
  return Mutate(hooks, &touched, [&](Txn& t) -> Status {
    touched = Touched{};
    Ops ops(this);
    ARCHIL_ASSIGN_OR_RETURN(Inode from, ops.LoadDir(t, parent));
    ARCHIL_ASSIGN_OR_RETURN(Inode to, ops.LoadDir(t, new_parent));
    ARCHIL_ASSIGN_OR_RETURN(std::optional<DentryRecord> sd, ops.LoadDentry(t, parent, name));
    if (!sd) return NoEntry(name);
    ARCHIL_ASSIGN_OR_RETURN(std::optional<DentryRecord> dd,
                            ops.LoadDentry(t, new_parent, new_name));
    ARCHIL_ASSIGN_OR_RETURN(Inode src, ops.LoadInode(t, sd->ino));
    const bool same_dir = parent == new_parent;
    // True if `ino` is `ancestor` or below it (walks the parent pointers up to the root).
    auto within = [&](Ino ino, Ino ancestor) -> Result<bool> {
      for (int depth = 0; depth < 100000; ++depth) {
        if (ino == ancestor) return true;
        if (ino == kRootIno) return false;
        ARCHIL_ASSIGN_OR_RETURN(Inode n, ops.LoadInode(t, ino));
        ino = n.rec.parent;
      }
      return Status::Corruption("directory parent chain does not reach the root");
    };
    // When both are the same directory, `from` carries every change (`to` is a stale copy).
    auto store_parents = [&]() -> Status {
      ops.Touch(from);
      ARCHIL_RETURN_IF_ERROR(ops.PutInode(t, from));
      touched.parent = ToAttr(from.ino, from.rec);
      if (!same_dir) {
        ops.Touch(to);
        ARCHIL_RETURN_IF_ERROR(ops.PutInode(t, to));
        touched.new_parent = ToAttr(to.ino, to.rec);
      }
      return Status::Ok();
    };
    Inode& dst_dir = same_dir ? from : to;

    if (flags & kRenameExchange) {
      if (!dd) return NoEntry(new_name);
      if (dd->ino == sd->ino) return Status::Ok();
      ARCHIL_ASSIGN_OR_RETURN(Inode dst, ops.LoadInode(t, dd->ino));
      if (S_ISDIR(src.rec.mode)) {
        ARCHIL_ASSIGN_OR_RETURN(bool loop, within(new_parent, src.ino));
        if (loop) return Status::Errno(EINVAL, "directory moved into its own subtree");
      }
      if (S_ISDIR(dst.rec.mode)) {
        ARCHIL_ASSIGN_OR_RETURN(bool loop, within(parent, dst.ino));
        if (loop) return Status::Errno(EINVAL, "directory moved into its own subtree");
      }
      ARCHIL_RETURN_IF_ERROR(ops.PutDentry(t, new_parent, new_name, src.ino, src.rec.mode));
      ARCHIL_RETURN_IF_ERROR(ops.PutDentry(t, parent, name, dst.ino, dst.rec.mode));
      if (S_ISDIR(src.rec.mode) != S_ISDIR(dst.rec.mode) && !same_dir) {
        Inode& gains = S_ISDIR(src.rec.mode) ? to : from;
        Inode& loses = S_ISDIR(src.rec.mode) ? from : to;
        gains.rec.nlink++;
        loses.rec.nlink--;
      }
      int64_t now = ops.NowNs();
      if (S_ISDIR(src.rec.mode)) src.rec.parent = new_parent;
      if (S_ISDIR(dst.rec.mode)) dst.rec.parent = parent;
      src.rec.ctime = dst.rec.ctime = now;
      ARCHIL_RETURN_IF_ERROR(ops.PutInode(t, src));
      ARCHIL_RETURN_IF_ERROR(ops.PutInode(t, dst));
      touched.moved = ToAttr(src.ino, src.rec);
      touched.replaced = ToAttr(dst.ino, dst.rec);
      return store_parents();
    }

    if (dd && (flags & kRenameNoReplace)) return Exists(new_name);
    if (dd && dd->ino == sd->ino) return Status::Ok();
    std::optional<Inode> dst;
    if (dd) {
      ARCHIL_ASSIGN_OR_RETURN(dst, ops.LoadInode(t, dd->ino));
      bool src_dir = S_ISDIR(src.rec.mode), dst_dir_kind = S_ISDIR(dst->rec.mode);
      if (src_dir && !dst_dir_kind) return Status::Errno(ENOTDIR, "target not a directory");
      if (!src_dir && dst_dir_kind) return Status::Errno(EISDIR, "target is a directory");
      if (dst_dir_kind) {
        ARCHIL_ASSIGN_OR_RETURN(bool empty, ops.DirIsEmpty(t, dst->ino));
        if (!empty) return Status::Errno(ENOTEMPTY, "target directory not empty");
      }
    }
    if (S_ISDIR(src.rec.mode)) {
      ARCHIL_ASSIGN_OR_RETURN(bool loop, within(new_parent, src.ino));
      if (loop) return Status::Errno(EINVAL, "directory moved into its own subtree");
    }
    ARCHIL_RETURN_IF_ERROR(ops.DeleteDentry(t, parent, name));
    ARCHIL_RETURN_IF_ERROR(ops.PutDentry(t, new_parent, new_name, src.ino, src.rec.mode));
    if (dst) {
      if (S_ISDIR(dst->rec.mode)) dst_dir.rec.nlink--;
      ARCHIL_RETURN_IF_ERROR(ops.DropLink(t, *dst, S_ISDIR(dst->rec.mode)));
    }
    if (S_ISDIR(src.rec.mode) && !same_dir) {
      from.rec.nlink--;
      to.rec.nlink++;
      src.rec.parent = new_parent;
    }
    src.rec.ctime = ops.NowNs();
    ARCHIL_RETURN_IF_ERROR(ops.PutInode(t, src));
    touched.moved = ToAttr(src.ino, src.rec);
    if (dst) touched.replaced = ToAttr(dst->ino, dst->rec);
    return store_parents();
  });
}

Result<std::string> DiskFs::Readlink(posix::Ino ino) {
  Ops ops(this);
  DbView view = ReadView();
  ARCHIL_ASSIGN_OR_RETURN(Inode n, ops.LoadInode(view, ino));
  if (!S_ISLNK(n.rec.mode)) return Status::Errno(EINVAL, "not a symlink");
  return n.rec.symlink_target;
}

Result<posix::DirPage> DiskFs::ReadDir(posix::Ino dir, uint64_t after_cookie, size_t max_entries) {
  Ops ops(this);
  DbView view = ReadView();
  ARCHIL_RETURN_IF_ERROR(ops.LoadDir(view, dir).status());
  posix::DirPage page;
  if (after_cookie == UINT64_MAX) {
    page.eof = true;
    return page;
  }
  ARCHIL_ASSIGN_OR_RETURN(std::unique_ptr<LevelScan> scan,
                          ops.Scan(view, Cf::kDentry, HistTag::kDentry, dir));
  scan->Seek(DentryLevelKey(dir, after_cookie + 1, "").rel);
  for (; scan->Valid(); scan->Next()) {
    std::string_view rel = scan->rel();
    if (rel.size() < 17) return Status::Corruption("dentry key too short");
    const uint64_t cookie = DecodeFixed64BE(rel.data() + 8);
    ARCHIL_ASSIGN_OR_RETURN(Versioned<DentryRecord> d, DecodeDentry(scan->value()));
    if (page.entries.size() >= max_entries) {
      // Entries sharing a cookie never straddle two pages: resuming after a cookie skips them all.
      if (!page.entries.empty() && page.entries.back().cookie == cookie) {
        while (!page.entries.empty() && page.entries.back().cookie == cookie) {
          page.entries.pop_back();
        }
        if (page.entries.empty())
          return Status::Errno(EOVERFLOW, "cookie collision group too large");
      }
      ARCHIL_RETURN_IF_ERROR(scan->status().WithContext("readdir"));
      return page;
    }
    page.entries.push_back({std::string(rel.substr(16)), d.body.ino, uint32_t{d.body.dtype} << 12,
                            cookie, std::nullopt});
  }
  ARCHIL_RETURN_IF_ERROR(scan->status().WithContext("readdir"));
  page.eof = true;
  return page;
}

}  // namespace archil::engine
