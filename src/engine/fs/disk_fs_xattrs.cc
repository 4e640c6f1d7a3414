// DiskFs: extended attributes, one XATTR record each, versioned like every other record
// (docs/formats.md §4.4); the per-inode totals of posix::CheckXattrSpace hold on every set.
#include <cerrno>

#include "engine/fs/disk_fs_ops.h"

namespace archil::engine {

Result<std::string> DiskFs::GetXattr(posix::Ino ino, std::string_view name) {
  ARCHIL_RETURN_IF_ERROR(posix::ValidateXattrName(name));
  Ops ops(this);
  DbView view = ReadView();
  ARCHIL_RETURN_IF_ERROR(ops.LoadInode(view, ino).status());
  ARCHIL_ASSIGN_OR_RETURN(std::optional<std::string> v,
                          levels_.Get(view, XattrLevelKey(ino, name)));
  if (!v) return Status::Errno(ENODATA, "no xattr " + std::string(name));
  ARCHIL_ASSIGN_OR_RETURN(Versioned<XattrRecord> x, DecodeXattr(*v));
  return std::move(x.body.value);
}

Status DiskFs::SetXattr(posix::Ino ino, std::string_view name, std::string_view value,
                        uint32_t flags) {
  return SetXattr(ino, name, value, flags, CommitHooks{});
}

Status DiskFs::SetXattr(posix::Ino ino, std::string_view name, std::string_view value,
                        uint32_t flags, const CommitHooks& hooks) {
  ARCHIL_RETURN_IF_ERROR(Admit(kBlockSize + value.size()));
  using posix::kXattrCreate;
  using posix::kXattrReplace;
  ARCHIL_RETURN_IF_ERROR(posix::ValidateXattrName(name));
  if (value.size() > posix::kXattrValueMax) return Status::Errno(E2BIG, "xattr value over 64 KiB");
  if ((flags & ~(kXattrCreate | kXattrReplace)) != 0 || flags == (kXattrCreate | kXattrReplace)) {
    return Status::Errno(EINVAL, "invalid xattr flags");
  }
  return Mutate(hooks, [&](Txn& t) -> Status {
    Ops ops(this);
    ARCHIL_ASSIGN_OR_RETURN(Inode n, ops.LoadInode(t, ino));
    LevelKey key = XattrLevelKey(ino, name);
    ARCHIL_ASSIGN_OR_RETURN(std::optional<std::string> old, levels_.Get(t, key));
    bool exists = old.has_value();
    if ((flags & kXattrCreate) && exists) return Status::Errno(EEXIST, "xattr exists");
    if ((flags & kXattrReplace) && !exists) return Status::Errno(ENODATA, "no such xattr");
    std::optional<size_t> old_size;
    if (exists) {
      ARCHIL_ASSIGN_OR_RETURN(Versioned<XattrRecord> x, DecodeXattr(*old));
      old_size = x.body.value.size();
    }
    posix::XattrTotals totals;
    if (n.rec.flags & kInodeFlagHasXattrs) {
      ARCHIL_ASSIGN_OR_RETURN(totals, XattrTotalsOf(ops, t, ino));
    }
    ARCHIL_RETURN_IF_ERROR(posix::CheckXattrSpace(totals, name, old_size, value.size()));
    ARCHIL_RETURN_IF_ERROR(
        ops.Store(t, key, EncodeXattr({ValueKind::kValue, 0, ops.epoch()}, {std::string(value)})));
    n.rec.flags |= kInodeFlagHasXattrs;
    n.rec.ctime = ops.NowNs();
    ARCHIL_RETURN_IF_ERROR(ops.PutInode(t, n));
    return Status::Ok();
  });
}

// The names and value sizes of every xattr `ino` has, as this disk sees them through its levels.
// One scan of the inode's xattr keys: at most kXattrNamesMax / 2 of them, since every name is at
// least one byte and its NUL.
Result<posix::XattrTotals> DiskFs::XattrTotalsOf(Ops& ops, KvReader& r, posix::Ino ino) {
  posix::XattrTotals totals;
  ARCHIL_ASSIGN_OR_RETURN(std::unique_ptr<LevelScan> scan,
                          ops.Scan(r, Cf::kXattr, HistTag::kXattr, ino));
  for (scan->Seek(XattrLevelKey(ino, "").rel); scan->Valid(); scan->Next()) {
    ARCHIL_ASSIGN_OR_RETURN(Versioned<XattrRecord> x, DecodeXattr(scan->value()));
    totals.Add(scan->rel().substr(8), x.body.value.size());
  }
  ARCHIL_RETURN_IF_ERROR(scan->status().WithContext("count xattrs"));
  return totals;
}

Result<std::vector<std::string>> DiskFs::ListXattr(posix::Ino ino) {
  Ops ops(this);
  DbView view = ReadView();
  ARCHIL_RETURN_IF_ERROR(ops.LoadInode(view, ino).status());
  std::vector<std::string> names;
  ARCHIL_ASSIGN_OR_RETURN(std::unique_ptr<LevelScan> scan,
                          ops.Scan(view, Cf::kXattr, HistTag::kXattr, ino));
  for (scan->Seek(XattrLevelKey(ino, "").rel); scan->Valid(); scan->Next()) {
    names.emplace_back(scan->rel().substr(8));
  }
  ARCHIL_RETURN_IF_ERROR(scan->status().WithContext("list xattrs"));
  return names;
}

Status DiskFs::RemoveXattr(posix::Ino ino, std::string_view name) {
  return RemoveXattr(ino, name, CommitHooks{});
}

Status DiskFs::RemoveXattr(posix::Ino ino, std::string_view name, const CommitHooks& hooks) {
  ARCHIL_RETURN_IF_ERROR(Writable());
  ARCHIL_RETURN_IF_ERROR(posix::ValidateXattrName(name));
  return Mutate(hooks, [&](Txn& t) -> Status {
    Ops ops(this);
    ARCHIL_ASSIGN_OR_RETURN(Inode n, ops.LoadInode(t, ino));
    LevelKey key = XattrLevelKey(ino, name);
    ARCHIL_ASSIGN_OR_RETURN(std::optional<std::string> old, levels_.Get(t, key));
    if (!old) return Status::Errno(ENODATA, "no xattr " + std::string(name));
    ARCHIL_RETURN_IF_ERROR(ops.Erase(t, key));
    n.rec.ctime = ops.NowNs();
    ARCHIL_RETURN_IF_ERROR(ops.PutInode(t, n));
    return Status::Ok();
  });
}

}  // namespace archil::engine
