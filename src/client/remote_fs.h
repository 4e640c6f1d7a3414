// RemoteFs: a disk served by a disk server, as a posix::FileSystem: every call is one request
// of docs/protocol.md §5.3-5.5 through a DiskClient (large reads and writes are split at 1 MiB).
// The same interface as the engine and the reference model, so the tests that drive those
// (posix/fs_driver.h) drive a remote disk too, through faults; and the FUSE client's core.
//
// Inode numbers are the server's. Errors carry the errno of the reply's status
// (proto::ErrnoForWire), so an application sees what the engine said. Statfs alone answers
// without a server: from the last figures it had.
//
// Thread-safety: safe for concurrent use (as DiskClient).
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <unordered_set>

#include "base/clock.h"
#include "base/mutex.h"
#include "client/attr_log.h"
#include "client/dir_attrs.h"
#include "client/disk_client.h"
#include "client/ino_pool.h"
#include "posix/file_system.h"

namespace archil::client {

// The protocol's attributes as the posix ones.
posix::Attr FromProto(const v1::Attr& a);

class RemoteFs final : public posix::FileSystem {
 public:
  // REQUIRES: `client` outlives this. `exclusive`: this client alone changes the disk (an
  // exclusive, writable mount). Then GetAttr of a directory is answered without a request from
  // the attributes the answer to the last change of its names carried, while no change of it was
  // sent since (client/dir_attrs.h); and, if the server applies attribute puts
  // (DiskClient::AttrPuts) and the client asked for durability at sync points only
  // (DiskClient::Unstable: not a --sync mount), SetAttr of an inode whose attributes are known is
  // answered here and sent ahead of the next mutation (client/attr_log.h), GetAttr of it too;
  // `clock` gives the times those answers stamp (UTIME_NOW, the change time).
  // REQUIRES: `clock` outlives this.
  explicit RemoteFs(DiskClient* client, bool exclusive = false,
                    const Clock* clock = &SystemClock::Instance());

  // GetAttrs answered without a request (DirAttrs, AttrLog).
  uint64_t local_getattrs() const { return local_getattrs_.load(std::memory_order_relaxed); }
  // LookupSeens answered without a request (the same attributes GetAttr answers from).
  uint64_t local_lookups() const { return local_lookups_.load(std::memory_order_relaxed); }
  // The attribute log's figures (all zero without one).
  AttrLog::Stats attr_log_stats() const;

  // Sends the attribute changes answered here and not yet sent (one PUT_ATTRS; none if there are
  // none). `budget_ms` > 0: given up (and counted lost) after that long without an answer.
  Status FlushAttrs(int budget_ms = 0);
  // Creates checkpoint `name` (DiskClient::Checkpoint) after every change answered here.
  Result<v1::CheckpointCreateReply> Checkpoint(std::string_view name);

  Result<posix::Attr> Lookup(posix::Ino parent, std::string_view name) override;
  // Answered without a request when `ino`'s attributes are known here (as GetAttr).
  Result<posix::Attr> LookupSeen(posix::Ino parent, std::string_view name, posix::Ino ino) override;
  Result<posix::Attr> GetAttr(posix::Ino ino) override;
  Result<posix::Attr> SetAttr(posix::Ino ino, const posix::SetAttrRequest& request) override;
  Result<posix::Attr> Mknod(posix::Ino parent, std::string_view name, uint32_t mode, uint32_t rdev,
                            posix::Owner owner) override;
  // Answered here (AttrLog::AnswerCreate), with a number of the session's grant (InoPool), when
  // the server applies create puts (DiskClient::CreatePuts) and the parent's attributes are kept
  // (DirAttrs: they then take the create's time); else Mknod.
  Result<posix::Attr> MknodNew(posix::Ino parent, std::string_view name, uint32_t mode,
                               uint32_t rdev, posix::Owner owner) override;
  Result<posix::Attr> Mkdir(posix::Ino parent, std::string_view name, uint32_t mode,
                            posix::Owner owner) override;
  // Answered here as MknodNew when the server also applies directory creates
  // (DiskClient::DirPuts); the new directory's attributes are then kept (DirAttrs::Created), so
  // what is created in it is answered here too. Until its create is held by the server, a read of
  // it or in it (GETATTR, LOOKUP, READDIR) sends it first. Else Mkdir.
  Result<posix::Attr> MkdirNew(posix::Ino parent, std::string_view name, uint32_t mode,
                               posix::Owner owner) override;
  Result<posix::Attr> Symlink(posix::Ino parent, std::string_view name, std::string_view target,
                              posix::Owner owner) override;
  Result<posix::Attr> Link(posix::Ino ino, posix::Ino new_parent,
                           std::string_view new_name) override;
  Status Unlink(posix::Ino parent, std::string_view name) override;
  // Answered here (AttrLog::AnswerRemove) when the server applies remove puts
  // (DiskClient::RemovePuts) and the parent's attributes are kept (DirAttrs: they then take the
  // unlink's time); else Unlink. `ino` is then gone (Gone).
  Status UnlinkLast(posix::Ino parent, std::string_view name, posix::Ino ino) override;
  Status Rmdir(posix::Ino parent, std::string_view name) override;
  // Answered here as UnlinkLast when the server also applies directory puts (DiskClient::DirPuts):
  // a remove put of the directory, which the server applies only if it is empty. Else Rmdir.
  Status RmdirEmpty(posix::Ino parent, std::string_view name, posix::Ino ino) override;
  Status Rename(posix::Ino parent, std::string_view name, posix::Ino new_parent,
                std::string_view new_name, uint32_t flags) override;
  Result<std::string> Readlink(posix::Ino ino) override;
  Result<posix::DirPage> ReadDirPlus(posix::Ino dir, uint64_t after_cookie,
                                     size_t max_entries) override;
  Result<posix::DirPage> ReadDir(posix::Ino dir, uint64_t after_cookie,
                                 size_t max_entries) override;
  Result<std::string> GetXattr(posix::Ino ino, std::string_view name) override;
  Status SetXattr(posix::Ino ino, std::string_view name, std::string_view value,
                  uint32_t flags) override;
  Result<std::vector<std::string>> ListXattr(posix::Ino ino) override;
  Status RemoveXattr(posix::Ino ino, std::string_view name) override;
  Result<std::string> Read(posix::Ino ino, uint64_t offset, size_t length) override;
  Result<posix::Attr> Write(posix::Ino ino, uint64_t offset, std::string_view data) override;
  // Answered before the server's sync when the server granted UNSTABLE; answered here, and sent
  // ahead of the next mutation, when it appends at most 64 KiB to a file whose attributes are
  // known (AttrLog::AnswerWrite; the server granted WRITE_PUTS). A Read of that file sends it
  // first.
  Result<posix::Attr> WriteBehind(posix::Ino ino, uint64_t offset, std::string_view data) override;
  Status Fallocate(posix::Ino ino, uint32_t mode, uint64_t offset, uint64_t length) override;
  // The server's figures; while no server answers, after kStatfsBudgetMs, the last ones it gave
  // (docs/semantics.md: what a user sees while the server is away).
  Result<posix::StatFs> Statfs() override;
  static constexpr int kStatfsBudgetMs = 5000;
  // Opens and releases are the session's (one holder per session, as the server keeps them).
  Status Open(posix::Ino ino, posix::HolderId holder) override;
  Status Release(posix::Ino ino, posix::HolderId holder) override;
  // The session's holds go when the session ends (DiskClient::Goodbye).
  Status DropHolder(posix::HolderId holder) override;
  // With the server's UNSTABLE feature (DiskClient::Unstable), the mutations of names and
  // attributes (not WRITE, whose durability the caller's flags say) are answered before the
  // server's sync, and this makes every one answered so far durable (DiskClient::Commit), the
  // attribute changes and writes answered here included: one round trip, a PUT_ATTRS that
  // carries them and commits (with WRITE_PUTS), else PUT_ATTRS then COMMIT. EIO, once, if some of
  // those never reached the disk since the last Sync (a write-back error: the journal says which).
  Status Sync() override { return SyncWithin(0); }
  // Sync, given up after `budget_ms` > 0 without an answer (the daemon's periodic pass).
  Status SyncWithin(int budget_ms);

 private:
  // Sends mutation `request` of `type` (its Mut `mut`) with the attribute changes answered here
  // before it (AttrLog::Begin/End), and parses the answer as R; the attributes R carries of its
  // own inode (a create's, a write's) are learned. `budget_ms` as FlushAttrs.
  template <typename R>
  Result<R> Mutate(uint16_t type, proto::Message& request, v1::Mut* mut,
                   std::string_view payload = {}, int budget_ms = 0);
  // Before a read the server answers: sends the creates answered here that it could see (`needed`)
  // and waits for them to be applied.
  Status SendCreatesIf(bool needed);
  // A create of `name` in `parent` answered here (MknodNew, MkdirNew): `a` (its mode, links,
  // owner and device number set) with a granted number and the client's time, the parent's links
  // changed by `parent_links`; nullopt if it must go to the server.
  std::optional<posix::Attr> AnswerCreateHere(posix::Ino parent, std::string_view name,
                                              posix::Attr a, int parent_links);
  // A remove of `name` (inode `ino`) from `parent` answered here (UnlinkLast, RmdirEmpty), the
  // parent's links changed by `parent_links`; false if it must go to the server.
  bool AnswerRemoveHere(posix::Ino parent, std::string_view name, posix::Ino ino, int parent_links);
  // INO_GRANT (protocol.md §5.3.3): `count` numbers for this session, its commit synced.
  Result<InoPool::Range> GrantInos(uint32_t count);
  static constexpr uint32_t kInoGrant = 4096;
  // WRITEs of at most 1 MiB each; `stable` false marks them unstable.
  Result<posix::Attr> Send(posix::Ino ino, uint64_t offset, std::string_view data, bool stable);
  // `mut`, marked unstable when the server granted it.
  v1::Mut* Unstable(v1::Mut* mut) const {
    mut->set_unstable(client_->Unstable());
    return mut;
  }
  Result<posix::DirPage> ReadDirPage(posix::Ino dir, uint64_t after_cookie, size_t max_entries,
                                     bool plus);

  // Whether `ino` went with its last name (an UNLINK's answer said so, or an unlink of its only
  // name was answered here). Inode numbers are never reused, so a SETATTR or GETATTR of it is
  // answered ENOENT without a request: the kernel sets the change time of a file it still caches
  // right after `rm` removed it. Bounded: forgotten past kMaxGone.
  bool Gone(posix::Ino ino) ARCHIL_EXCLUDES(mu_);
  // `ino`'s attributes if this client knows them exactly (AttrLog, then DirAttrs), else nullopt.
  std::optional<posix::Attr> Known(posix::Ino ino);
  void MarkGone(posix::Ino ino) ARCHIL_EXCLUDES(mu_);
  static constexpr size_t kMaxGone = size_t{1} << 16;

  DiskClient* const client_;
  const Clock* const clock_;
  const std::unique_ptr<DirAttrs> dir_attrs_;  // null unless exclusive
  const std::unique_ptr<AttrLog> attr_log_;    // null unless exclusive and the server applies puts
  const std::unique_ptr<InoPool> inos_;        // null unless attr_log_ and create puts
  std::atomic<uint64_t> inos_session_{0};      // DiskClient's recreated count inos_ was granted in
  std::atomic<uint64_t> lost_reported_{0};     // AttrLog's lost puts a Sync has reported
  std::atomic<uint64_t> local_getattrs_{0};
  std::atomic<uint64_t> local_lookups_{0};
  Mutex mu_;
  std::optional<posix::StatFs> last_statfs_ ARCHIL_GUARDED_BY(mu_);
  std::unordered_set<uint64_t> gone_ ARCHIL_GUARDED_BY(mu_);
};

}  // namespace archil::client
