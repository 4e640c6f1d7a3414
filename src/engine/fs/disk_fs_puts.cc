// What a client answered itself (docs/protocol.md §5.3.2): inode numbers granted to its session,
// and the creates, writes, attribute puts and removes it sends ahead of its next request.
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <unordered_map>

#include "engine/fs/disk_fs.h"
#include "engine/fs/disk_fs_ops.h"
#include "engine/records/session_records.h"

namespace archil::engine {

namespace {

// The session's grant as its record says, or empty ranges if it has none.
Result<InoGrantRecord> LoadGrant(Txn& t, rocksdb::ColumnFamilyHandle* cf, const std::string& key) {
  Result<std::string> v = t.Get(cf, key);
  if (!v.ok()) {
    if (v.status().code() == Status::Code::kNotFound) return InoGrantRecord{};
    return v.status();
  }
  return DecodeInoGrant(*v);
}

// Uses `ino` from the grant: true if it was granted and not yet used (it is used now), false if
// it was not granted to this session or was used already.
bool TakeGranted(InoGrantRecord& g, posix::Ino ino) {
  auto take = [&](Ino& next, Ino end) {
    if (ino.value() < next.value() || ino.value() >= end.value()) return false;
    next = Ino(ino.value() + 1);
    return true;
  };
  return take(g.next, g.end) || take(g.prev_next, g.prev_end);
}

}  // namespace

Result<posix::Ino> DiskFs::GrantInos(const SessionIdBytes& session, uint32_t count,
                                     const CommitHooks& hooks) {
  if (count == 0 || count > kMaxInoGrant) {
    return Status::Errno(EINVAL, "an inode grant of " + std::to_string(count) + " numbers");
  }
  ARCHIL_RETURN_IF_ERROR(Writable());
  const std::string key = InoGrantKey(disk_, session);
  Ino first;
  // Its own commit, so that the epilogue (the slot record of INO_GRANT's reply) sees the range.
  auto prepare = [&](Txn& t) -> Status {
    Ops ops(this);
    ARCHIL_ASSIGN_OR_RETURN(CountersRecord c, ops.LoadCounters(t));
    if (c.next_ino > kInoCounterMask || kInoCounterMask - c.next_ino < count - 1) {
      return Status::Errno(ENOSPC, "inode numbers exhausted");
    }
    first = MakeIno(lineage_index_, c.next_ino);
    c.next_ino += count;
    ops.PutCounters(t, c);
    ARCHIL_ASSIGN_OR_RETURN(InoGrantRecord g, LoadGrant(t, ops.cf(Cf::kSession), key));
    g.prev_next = g.next;
    g.prev_end = g.end;
    g.next = first;
    g.end = Ino(first.value() + count);
    t.Put(ops.cf(Cf::kSession), key, EncodeInoGrant(g));
    return Status::Ok();
  };
  ARCHIL_RETURN_IF_ERROR(core_->queue->Commit(
      [&](Txn& t) -> Status {
        ARCHIL_RETURN_IF_ERROR(prepare(t));
        if (hooks.epilogue) hooks.epilogue(t, CommitResult{.granted_first = first.value()});
        return Status::Ok();
      },
      hooks.on_queued, hooks.sync));
  return first;
}

Status DiskFs::ApplyPuts(const posix::Puts& puts, const CommitHooks& hooks, size_t* skipped,
                         const SessionIdBytes* session) {
  uint64_t bytes = 0;
  if (!puts.creates.empty() && session == nullptr) {
    return Status::Errno(EINVAL, "creates put without a session that was granted their numbers");
  }
  for (const posix::CreatePut& c : puts.creates) {
    if (!(MknodType(c.mode) || S_ISDIR(c.mode)) || (c.mode & ~(S_IFMT | 07777)) != 0 ||
        (S_ISDIR(c.mode) && c.rdev != 0)) {
      return Status::Errno(EINVAL, "a create put of an unsupported type or mode");
    }
    ARCHIL_RETURN_IF_ERROR(posix::ValidateName(c.name));
    bytes += kBlockSize;
  }
  for (const posix::WritePut& w : puts.writes) {
    if (w.data.empty()) return Status::Errno(EINVAL, "a write put without data");
    if (w.offset > posix::kMaxFileSize || w.data.size() > posix::kMaxFileSize - w.offset) {
      return Status::Errno(EFBIG, "a write put beyond the maximum file size");
    }
    bytes += kBlockSize + w.data.size();
  }
  for (const posix::RemovePut& r : puts.removes)
    ARCHIL_RETURN_IF_ERROR(posix::ValidateName(r.name));
  ARCHIL_RETURN_IF_ERROR(bytes == 0 ? Writable() : Admit(bytes));
  const std::string grant_key = session ? InoGrantKey(disk_, *session) : std::string();
  size_t gone = 0;
  Status st = Mutate(hooks, [&](Txn& t) -> Status {
    Ops ops(this);
    gone = 0;  // a prepare may run again
    // A parent's mtime and ctime: the latest time of the creates and removes in it so far. Removes
    // are applied after creates answered later than them (a directory's times would go back).
    std::unordered_map<uint64_t, int64_t> latest;
    auto touch = [&](Inode& dir, posix::Timespec time) {
      int64_t& ns = latest[dir.ino.value()];
      ns = std::max(ns, time.nanos());
      dir.rec.mtime = dir.rec.ctime = ns;
    };
    // Each inode the batch changes is loaded once and stored once, at the end: a file created,
    // written and given its attributes, or a directory that gains 200 names, in one batch is one
    // inode record (one history check, one memtable entry), not one per change.
    std::unordered_map<uint64_t, Inode> changed;
    auto changing = [&](posix::Ino ino) -> Result<Inode*> {
      auto it = changed.find(ino.value());
      if (it != changed.end()) return &it->second;
      ARCHIL_ASSIGN_OR_RETURN(Inode n, ops.LoadInode(t, ino));
      return &changed.emplace(ino.value(), std::move(n)).first->second;
    };
    auto changing_dir = [&](posix::Ino ino) -> Result<Inode*> {
      ARCHIL_ASSIGN_OR_RETURN(Inode * dir, changing(ino));
      if (!S_ISDIR(dir->rec.mode)) return Status::Errno(ENOTDIR, "not a directory");
      return dir;
    };
    if (!puts.creates.empty()) {
      ARCHIL_ASSIGN_OR_RETURN(InoGrantRecord g, LoadGrant(t, ops.cf(Cf::kSession), grant_key));
      for (const posix::CreatePut& c : puts.creates) {
        ARCHIL_ASSIGN_OR_RETURN(std::optional<DentryRecord> d, ops.LoadDentry(t, c.parent, c.name));
        if (d && d->ino == c.ino) continue;  // applied before: a retried request
        // A granted number names one inode, once.
        if (!TakeGranted(g, c.ino)) {
          return Status::Errno(EINVAL, "inode number " + std::to_string(c.ino.value()) +
                                           " was not granted to this session, or was used");
        }
        if (d) return Status::Errno(EEXIST, "'" + c.name + "' exists");
        ARCHIL_ASSIGN_OR_RETURN(Inode * dir, changing_dir(c.parent));
        Inode n = ops.NewInode(c.ino, c.mode, posix::Owner{c.uid, c.gid});
        n.rec.atime = n.rec.mtime = n.rec.ctime = n.rec.btime = c.time.nanos();
        if (S_ISCHR(c.mode) || S_ISBLK(c.mode)) n.rec.rdev = c.rdev;
        if (S_ISDIR(c.mode)) {  // as Mkdir
          n.rec.nlink = 2;
          n.rec.parent = c.parent;
          dir->rec.nlink++;  // its ".."
        }
        ARCHIL_RETURN_IF_ERROR(ops.PutDentry(t, c.parent, c.name, c.ino, n.rec.mode));
        touch(*dir, c.time);
        changed.emplace(c.ino.value(), std::move(n));
      }
      t.Put(ops.cf(Cf::kSession), grant_key, EncodeInoGrant(g));
    }
    // The inode a put names, or null if it no longer exists (nothing is left to set).
    auto load = [&](posix::Ino ino) -> Result<Inode*> {
      Result<Inode*> loaded = changing(ino);
      if (!loaded.ok() && loaded.status().sys_errno() == ENOENT) {
        ++gone;
        return nullptr;
      }
      return loaded;
    };
    for (const posix::WritePut& w : puts.writes) {
      ARCHIL_ASSIGN_OR_RETURN(Inode * n, load(w.ino));
      if (!n) continue;
      if (!S_ISREG(n->rec.mode)) return Status::Errno(EINVAL, "a write put to a non-file");
      ARCHIL_RETURN_IF_ERROR(ops.WriteData(t, *n, w.offset, w.data));
    }
    for (const posix::AttrPut& p : puts.attrs) {
      if (p.mode && *p.mode > 07777) return Status::Errno(EINVAL, "mode beyond 07777");
      ARCHIL_ASSIGN_OR_RETURN(Inode * n, load(p.ino));
      if (!n) continue;
      if (p.mode) n->rec.mode = (n->rec.mode & S_IFMT) | *p.mode;
      if (p.uid) n->rec.uid = *p.uid;
      if (p.gid) n->rec.gid = *p.gid;
      if (p.atime) n->rec.atime = p.atime->nanos();
      if (p.mtime) n->rec.mtime = p.mtime->nanos();
      n->rec.ctime = p.ctime.nanos();
    }
    for (const posix::RemovePut& r : puts.removes) {
      Result<Inode*> parent = changing_dir(r.parent);
      // Applied before (a retried request) when the parent went too, later in it (`rm -rf`): the
      // removed inode is gone as well. A parent missing alone is an error.
      if (!parent.ok() && parent.status().sys_errno() == ENOENT) {
        Result<Inode> target = ops.LoadInode(t, r.ino);
        if (!target.ok() && target.status().sys_errno() == ENOENT) {
          ++gone;
          continue;
        }
      }
      ARCHIL_ASSIGN_OR_RETURN(Inode * dir, std::move(parent));
      ARCHIL_ASSIGN_OR_RETURN(std::optional<DentryRecord> d, ops.LoadDentry(t, r.parent, r.name));
      if (!d) {  // applied before: a retried request
        ++gone;
        continue;
      }
      if (d->ino != r.ino || d->ino == r.parent) {
        return Status::Errno(EINVAL, "a remove put of '" + r.name + "', which names another inode");
      }
      // Its last name goes: DropLink stores or purges it, so it leaves the inodes stored below.
      ARCHIL_ASSIGN_OR_RETURN(Inode * held, changing(d->ino));
      Inode n = std::move(*held);
      changed.erase(d->ino.value());
      if (S_ISDIR(n.rec.mode)) {  // as Rmdir: the client knew it empty
        ARCHIL_ASSIGN_OR_RETURN(bool empty, ops.DirIsEmpty(t, n.ino));
        if (!empty) return Status::Errno(ENOTEMPTY, "a remove put of a directory not empty");
        ARCHIL_RETURN_IF_ERROR(ops.DeleteDentry(t, r.parent, r.name));
        dir->rec.nlink--;
        touch(*dir, r.time);
        ARCHIL_RETURN_IF_ERROR(ops.DropLink(t, n, true, nullptr, r.time.nanos()));
        continue;
      }
      // The client answered the unlink as the end of the inode: it must be.
      if (n.rec.nlink != 1) {
        return Status::Errno(
            EINVAL, "a remove put of '" + r.name + "', which names an inode with other names");
      }
      ARCHIL_RETURN_IF_ERROR(ops.DeleteDentry(t, r.parent, r.name));
      touch(*dir, r.time);
      ARCHIL_RETURN_IF_ERROR(ops.DropLink(t, n, false, nullptr, r.time.nanos()));
    }
    for (auto& [ino, n] : changed) ARCHIL_RETURN_IF_ERROR(ops.PutInode(t, n));
    return Status::Ok();
  });
  if (skipped) *skipped = gone;
  return st;
}

}  // namespace archil::engine
