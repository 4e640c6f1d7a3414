// DiskFs: opens and releases (the holder table), and purging an inode once it has neither a name
// nor a holder (docs/formats.md §5.6).
#include <cerrno>

#include "engine/fs/disk_fs_ops.h"

namespace archil::engine {

Status DiskFs::Open(posix::Ino ino, posix::HolderId holder) {
  Ops ops(this);
  DbView view = ReadView();
  ARCHIL_RETURN_IF_ERROR(ops.LoadInode(view, ino).status());
  holders_.Add(ino, holder.value());
  return Status::Ok();
}

Status DiskFs::Release(posix::Ino ino, posix::HolderId holder) {
  ARCHIL_ASSIGN_OR_RETURN(bool last, holders_.Remove(ino, holder.value()));
  if (!last) return Status::Ok();
  return PurgeIfUnreferenced(ino);
}

Status DiskFs::PurgeIfUnreferenced(Ino ino) {
  if (read_only()) return Status::Ok();
  return core_->queue->Commit([&](Txn& t) -> Status {
    Ops ops(this);
    Result<Inode> n = ops.LoadInode(t, ino);
    if (!n.ok()) return n.status().sys_errno() == ENOENT ? Status::Ok() : n.status();
    if (n->rec.nlink > 0 || !holders_.Of(ino).empty()) return Status::Ok();
    return ops.PurgeInode(t, ino);
  });
}

Status DiskFs::DropHolder(posix::HolderId holder) {
  for (Ino ino : holders_.DropHolder(holder.value())) {
    ARCHIL_RETURN_IF_ERROR(PurgeIfUnreferenced(ino));
  }
  return Status::Ok();
}

void DiskFs::RestoreOrphan(Ino ino, const std::vector<uint64_t>& holders) {
  holders_.Restore(ino, holders);
}

}  // namespace archil::engine
