#include "client/remote_fs.h"

#include <sys/stat.h>

#include "base/crc32c.h"
#include "base/log.h"
#include "proto/setattr_bits.h"
#include "proto/validate.h"

namespace archil::client {

namespace {

constexpr size_t kChunk = 1 << 20;  // bytes per READ or WRITE request
// Written data of one file the mount answers itself at most (ADR 0029); half of what one request
// may carry (proto::kMaxWritePutBytes).
constexpr size_t kMaxWriteAnswered = 64 << 10;

template <typename R>
Result<posix::Attr> AttrOf(Result<R> r) {
  if (!r.ok()) return r.status();
  return FromProto(r->attr());
}

// The attributes of the changed directory that an answer to a change of names carried.
template <typename R>
std::optional<posix::Attr> ParentAttrOf(const Result<R>& r) {
  if (!r.ok() || !r->has_parent_attr()) return std::nullopt;
  return FromProto(r->parent_attr());
}

void SetCaller(v1::Caller* c, posix::Owner owner) {
  c->set_uid(owner.uid);
  c->set_gid(owner.gid);
}

Status NoInode(posix::Ino ino) {
  return Status::Errno(ENOENT, "inode " + std::to_string(ino.value()) + " was removed");
}

void ToProto(const posix::AttrPut& p, v1::AttrPut* out) {
  uint32_t valid = 0;
  out->set_ino(p.ino.value());
  if (p.mode) valid |= proto::kSetMode, out->set_mode(*p.mode);
  if (p.uid) valid |= proto::kSetUid, out->set_uid(*p.uid);
  if (p.gid) valid |= proto::kSetGid, out->set_gid(*p.gid);
  if (p.atime) valid |= proto::kSetAtime, out->set_atime_ns(p.atime->nanos());
  if (p.mtime) valid |= proto::kSetMtime, out->set_mtime_ns(p.mtime->nanos());
  out->set_ctime_ns(p.ctime.nanos());
  out->set_valid(valid);
}

// Whether the server applied the attribute puts a request carried: its answer was OK, or an
// error that says they were (protocol.md §5.3.2). No answer: not known, so not.
bool PutsApplied(const Result<Reply>& reply) {
  if (!reply.ok()) return false;
  if (reply->status == proto::WireStatus::kOk) return true;
  v1::ErrorReply e;
  return e.ParseFromString(reply->body) && e.puts_applied();
}

// The attributes of its own inode an answer carries, if its type has them.
template <typename R>
std::optional<posix::Attr> OwnAttrOf(const Result<R>& r) {
  if constexpr (requires { r->attr(); }) {
    if (r.ok() && r->has_attr()) return FromProto(r->attr());
  }
  return std::nullopt;
}

}  // namespace

RemoteFs::RemoteFs(DiskClient* client, bool exclusive, const Clock* clock)
    : client_(client),
      clock_(clock),
      dir_attrs_(exclusive ? std::make_unique<DirAttrs>() : nullptr),
      attr_log_(exclusive && client->AttrPuts() && client->Unstable() ? std::make_unique<AttrLog>()
                                                                      : nullptr),
      inos_(attr_log_ && client->CreatePuts()
                ? std::make_unique<InoPool>([this](uint32_t n) { return GrantInos(n); }, kInoGrant)
                : nullptr) {
  static_assert(AttrLog::kMaxCreates == proto::kMaxCreatePuts);
  static_assert(AttrLog::kMaxRemoves == proto::kMaxRemovePuts);
  static_assert(AttrLog::kMaxWrites == proto::kMaxWritePuts);
  static_assert(AttrLog::kMaxBytes == proto::kMaxWritePutBytes);
  static_assert(kInoGrant <= proto::kMaxInoGrant);
}

AttrLog::Stats RemoteFs::attr_log_stats() const {
  return attr_log_ ? attr_log_->stats() : AttrLog::Stats{};
}

template <typename R>
Result<R> RemoteFs::Mutate(uint16_t type, proto::Message& request, v1::Mut* mut,
                           std::string_view payload, int budget_ms) {
  auto call = [&] {
    return budget_ms > 0 ? client_->CallWithin(budget_ms, type, request, mut, payload)
                         : client_->Call(type, request, mut, payload);
  };
  if (!attr_log_) return DiskClient::ParseAs<R>(call());
  AttrLog::Ticket ticket = attr_log_->Begin();
  for (const posix::CreatePut& c : ticket.puts.creates) {
    v1::CreatePut* out = mut->add_creates();
    out->set_parent(c.parent.value());
    out->set_name(c.name);
    out->set_ino(c.ino.value());
    out->set_mode(c.mode);
    out->set_rdev(c.rdev);
    out->set_uid(c.uid);
    out->set_gid(c.gid);
    out->set_time_ns(c.time.nanos());
  }
  for (const posix::WritePut& w : ticket.puts.writes) {
    v1::WritePut* out = mut->add_writes();
    out->set_ino(w.ino.value());
    out->set_offset(w.offset);
    out->set_data(w.data);
    out->set_crc32c(Crc32c(w.data));
  }
  for (const posix::AttrPut& p : ticket.puts.attrs) ToProto(p, mut->add_puts());
  for (const posix::RemovePut& r : ticket.puts.removes) {
    v1::RemovePut* out = mut->add_removes();
    out->set_parent(r.parent.value());
    out->set_name(r.name);
    out->set_ino(r.ino.value());
    out->set_time_ns(r.time.nanos());
  }
  Result<Reply> reply = call();
  const bool applied = PutsApplied(reply);
  if (!applied && !ticket.puts.empty()) {
    ARCHIL_LOG(kError) << "disk client: " << ticket.puts.creates.size() << " creates, "
                       << ticket.puts.attrs.size() << " attribute changes, "
                       << ticket.puts.writes.size() << " writes and " << ticket.puts.removes.size()
                       << " unlinks this mount answered did not reach the disk: "
                       << (reply.ok() ? DiskClient::StatusOf(*reply) : reply.status()).message();
  }
  Result<R> r = DiskClient::ParseAs<R>(std::move(reply));
  attr_log_->End(std::move(ticket), applied, OwnAttrOf(r), type == proto::kTypePutAttrs);
  return r;
}

Status RemoteFs::FlushAttrs(int budget_ms) {
  if (!attr_log_ || attr_log_->stats().pending == 0) return Status::Ok();
  v1::PutAttrs m;
  return Mutate<v1::PutAttrsReply>(proto::kTypePutAttrs, m, Unstable(m.mutable_mut()), {},
                                   budget_ms)
      .status();
}

Status RemoteFs::SyncWithin(int budget_ms) {
  Status sent = Status::Ok();
  if (attr_log_ && client_->WritePuts()) {
    // One round trip: what waits here, and a commit of everything answered before it.
    if (attr_log_->stats().pending > 0 || client_->UnstablePending() > 0) {
      sent = client_->CommitVia([&] {
        v1::PutAttrs m;
        m.set_commit(true);
        return Mutate<v1::PutAttrsReply>(proto::kTypePutAttrs, m, m.mutable_mut(), {}, budget_ms)
            .status();
      });
    }
  } else {
    sent = FlushAttrs(budget_ms);
    if (sent.ok()) sent = client_->Commit(budget_ms);
  }
  if (!attr_log_) return sent;
  // What this mount answered and the disk never got is a write-back error: ENOSPC or EDQUOT if the
  // request that carried it was refused for that, EIO whatever else it was answered.
  const uint64_t lost = attr_log_->stats().lost;
  const uint64_t reported = lost_reported_.exchange(lost);
  if (lost > reported) {
    if (!sent.ok() && (sent.sys_errno() == ENOSPC || sent.sys_errno() == EDQUOT)) return sent;
    return Status::Errno(EIO, std::to_string(lost - reported) +
                                  " changes (attributes, unlinks, and the writes they followed) "
                                  "answered by this mount did not reach the disk (the journal says "
                                  "when)");
  }
  return sent;
}

Result<v1::CheckpointCreateReply> RemoteFs::Checkpoint(std::string_view name) {
  v1::CheckpointCreate m;
  m.set_name(std::string(name));
  return Mutate<v1::CheckpointCreateReply>(proto::kTypeCheckpointCreate, m, m.mutable_mut());
}

posix::Attr FromProto(const v1::Attr& a) {
  posix::Attr out;
  out.ino = posix::Ino(a.ino());
  out.mode = a.mode();
  out.nlink = a.nlink();
  out.uid = a.uid();
  out.gid = a.gid();
  out.rdev = static_cast<uint32_t>(a.rdev());
  out.size = a.size();
  out.blocks = a.blocks();
  out.atime = posix::Timespec::FromNanos(a.atime_ns());
  out.mtime = posix::Timespec::FromNanos(a.mtime_ns());
  out.ctime = posix::Timespec::FromNanos(a.ctime_ns());
  out.btime = posix::Timespec::FromNanos(a.btime_ns());
  return out;
}

Result<posix::Attr> RemoteFs::Lookup(posix::Ino parent, std::string_view name) {
  if (attr_log_) {
    ARCHIL_RETURN_IF_ERROR(
        SendCreatesIf(attr_log_->UnsentIn(parent, name) || attr_log_->Unsent(parent)));
  }
  v1::Lookup m;
  m.set_parent(parent.value());
  m.set_name(std::string(name));
  ARCHIL_ASSIGN_OR_RETURN(v1::LookupReply r,
                          client_->CallAs<v1::LookupReply>(proto::kTypeLookup, m));
  if (!r.found()) return Status::Errno(ENOENT, "no entry '" + std::string(name) + "'");
  posix::Attr a = FromProto(r.attr());
  if (attr_log_) attr_log_->Overlay(&a);
  return a;
}

bool RemoteFs::Gone(posix::Ino ino) {
  MutexLock lock(&mu_);
  return gone_.count(ino.value()) > 0;
}

void RemoteFs::MarkGone(posix::Ino ino) {
  MutexLock lock(&mu_);
  if (gone_.size() >= kMaxGone) gone_.clear();
  gone_.insert(ino.value());
}

std::optional<posix::Attr> RemoteFs::Known(posix::Ino ino) {
  std::optional<posix::Attr> known;
  if (attr_log_) known = attr_log_->Get(ino);
  if (!known && dir_attrs_) known = dir_attrs_->Get(ino);
  return known;
}

Result<posix::Attr> RemoteFs::LookupSeen(posix::Ino parent, std::string_view name, posix::Ino ino) {
  if (!Gone(ino)) {
    if (std::optional<posix::Attr> known = Known(ino)) {
      local_lookups_.fetch_add(1, std::memory_order_relaxed);
      return *known;
    }
  }
  return Lookup(parent, name);
}

Result<posix::Attr> RemoteFs::GetAttr(posix::Ino ino) {
  if (Gone(ino)) return NoInode(ino);
  if (std::optional<posix::Attr> known = Known(ino)) {
    local_getattrs_.fetch_add(1, std::memory_order_relaxed);
    return *known;
  }
  // A directory created here whose attributes DirAttrs no longer keeps.
  if (attr_log_) ARCHIL_RETURN_IF_ERROR(SendCreatesIf(attr_log_->Unsent(ino)));
  v1::GetAttr m;
  m.set_ino(ino.value());
  return AttrOf(client_->CallAs<v1::GetAttrReply>(proto::kTypeGetAttr, m));
}

Result<posix::Attr> RemoteFs::SetAttr(posix::Ino ino, const posix::SetAttrRequest& req) {
  if (Gone(ino)) return NoInode(ino);
  if (attr_log_) {
    if (std::optional<posix::Attr> a = attr_log_->Answer(
            ino, req, posix::Timespec::FromNanos(clock_->NowNanos()), clock_->MonotonicNanos())) {
      // What DirAttrs kept of a directory is older than this change: once the log forgets the
      // inode (its put answered), a GETATTR must not fall back on it.
      if (dir_attrs_) dir_attrs_->Forget(ino);
      return *a;
    }
  }
  v1::SetAttr m;
  m.set_ino(ino.value());
  uint32_t valid = 0;
  if (req.mode) valid |= proto::kSetMode, m.set_mode(*req.mode);
  if (req.uid) valid |= proto::kSetUid, m.set_uid(*req.uid);
  if (req.gid) valid |= proto::kSetGid, m.set_gid(*req.gid);
  if (req.size) valid |= proto::kSetSize, m.set_size(*req.size);
  using K = posix::TimeUpdate::Kind;
  if (req.atime.kind == K::kNow) valid |= proto::kSetAtimeNow;
  if (req.atime.kind == K::kValue)
    valid |= proto::kSetAtime, m.set_atime_ns(req.atime.value.nanos());
  if (req.mtime.kind == K::kNow) valid |= proto::kSetMtimeNow;
  if (req.mtime.kind == K::kValue)
    valid |= proto::kSetMtime, m.set_mtime_ns(req.mtime.value.nanos());
  m.set_valid(valid);
  m.set_stable(true);
  DirChange change(dir_attrs_.get(), ino);
  Result<posix::Attr> r =
      AttrOf(Mutate<v1::SetAttrReply>(proto::kTypeSetAttr, m, Unstable(m.mutable_mut())));
  if (r.ok() && S_ISDIR(r->mode)) change.Done(*r);
  return r;
}

Result<posix::Attr> RemoteFs::Mknod(posix::Ino parent, std::string_view name, uint32_t mode,
                                    uint32_t rdev, posix::Owner owner) {
  v1::Mknod m;
  m.set_parent(parent.value());
  m.set_name(std::string(name));
  m.set_mode(mode);
  m.set_rdev(rdev);
  SetCaller(m.mutable_caller(), owner);
  DirChange change(dir_attrs_.get(), parent);
  auto r = Mutate<v1::MknodReply>(proto::kTypeMknod, m, Unstable(m.mutable_mut()));
  change.Done(ParentAttrOf(r));
  return AttrOf(std::move(r));
}

Result<posix::Attr> RemoteFs::MknodNew(posix::Ino parent, std::string_view name, uint32_t mode,
                                       uint32_t rdev, posix::Owner owner) {
  posix::Attr a;
  a.mode = mode;
  a.nlink = 1;
  a.uid = owner.uid;
  a.gid = owner.gid;
  a.rdev = (S_ISCHR(mode) || S_ISBLK(mode)) ? rdev : 0;
  if (std::optional<posix::Attr> made = AnswerCreateHere(parent, name, a, /*parent_links=*/0)) {
    return *made;
  }
  return Mknod(parent, name, mode, rdev, owner);
}

std::optional<posix::Attr> RemoteFs::AnswerCreateHere(posix::Ino parent, std::string_view name,
                                                      posix::Attr a, int parent_links) {
  if (!inos_ || !dir_attrs_->Get(parent) || !posix::ValidateName(name).ok()) return std::nullopt;
  const uint64_t session = client_->SessionsRecreated();
  if (inos_session_.exchange(session) != session) inos_->Reset();
  // A number left unused (the create goes to the server after all) is never needed again.
  const std::optional<posix::Ino> ino = inos_->Take();
  if (!ino) return std::nullopt;
  const posix::Timespec now = posix::Timespec::FromNanos(clock_->NowNanos());
  // The parent's kept attributes take the create's time before the create can be carried: an
  // answer to a later change of the parent is then never overwritten by this older time.
  if (!dir_attrs_->Touch(parent, now, parent_links)) return std::nullopt;
  a.ino = *ino;
  a.atime = a.mtime = a.ctime = a.btime = now;
  const posix::CreatePut create{parent, std::string(name), *ino, a.mode, a.rdev, a.uid, a.gid, now};
  if (!attr_log_->AnswerCreate(create, a, clock_->MonotonicNanos())) {
    dir_attrs_->Forget(parent);  // it took the time of a create that goes to the server instead
    return std::nullopt;
  }
  return a;
}

Result<InoPool::Range> RemoteFs::GrantInos(uint32_t count) {
  v1::InoGrant m;
  m.set_count(count);
  ARCHIL_ASSIGN_OR_RETURN(v1::InoGrantReply r,
                          Mutate<v1::InoGrantReply>(proto::kTypeInoGrant, m, m.mutable_mut()));
  if (r.count() != count) return Status::Corruption("an INO_GRANT answer of another count");
  return InoPool::Range{r.first(), r.count()};
}

Status RemoteFs::SendCreatesIf(bool needed) {
  if (!needed) return Status::Ok();
  ARCHIL_RETURN_IF_ERROR(FlushAttrs());
  attr_log_->AwaitCarrier();
  return Status::Ok();
}

Result<posix::Attr> RemoteFs::MkdirNew(posix::Ino parent, std::string_view name, uint32_t mode,
                                       posix::Owner owner) {
  if (!client_->DirPuts()) return Mkdir(parent, name, mode, owner);
  posix::Attr a;
  a.mode = S_IFDIR | (mode & 07777);
  a.nlink = 2;
  a.uid = owner.uid;
  a.gid = owner.gid;
  // The parent gains the new directory's "..".
  std::optional<posix::Attr> made = AnswerCreateHere(parent, name, a, /*parent_links=*/1);
  if (!made) return Mkdir(parent, name, mode, owner);
  // Its attributes are DirAttrs' from now on: its first creates are answered here too.
  dir_attrs_->Created(*made);
  return *made;
}

Result<posix::Attr> RemoteFs::Mkdir(posix::Ino parent, std::string_view name, uint32_t mode,
                                    posix::Owner owner) {
  v1::Mkdir m;
  m.set_parent(parent.value());
  m.set_name(std::string(name));
  m.set_mode(mode);
  SetCaller(m.mutable_caller(), owner);
  DirChange change(dir_attrs_.get(), parent);
  auto r = Mutate<v1::MkdirReply>(proto::kTypeMkdir, m, Unstable(m.mutable_mut()));
  change.Done(ParentAttrOf(r));
  Result<posix::Attr> made = AttrOf(std::move(r));
  // Its first create, and the kernel's lookups of it, need not ask what the answer just said.
  if (dir_attrs_ && made.ok()) dir_attrs_->Created(*made);
  return made;
}

Result<posix::Attr> RemoteFs::Symlink(posix::Ino parent, std::string_view name,
                                      std::string_view target, posix::Owner owner) {
  v1::Symlink m;
  m.set_parent(parent.value());
  m.set_name(std::string(name));
  m.set_target(std::string(target));
  SetCaller(m.mutable_caller(), owner);
  DirChange change(dir_attrs_.get(), parent);
  auto r = Mutate<v1::SymlinkReply>(proto::kTypeSymlink, m, Unstable(m.mutable_mut()));
  change.Done(ParentAttrOf(r));
  return AttrOf(std::move(r));
}

Result<posix::Attr> RemoteFs::Link(posix::Ino ino, posix::Ino new_parent,
                                   std::string_view new_name) {
  v1::Link m;
  m.set_ino(ino.value());
  m.set_new_parent(new_parent.value());
  m.set_new_name(std::string(new_name));
  DirChange change(dir_attrs_.get(), new_parent);
  auto r = Mutate<v1::LinkReply>(proto::kTypeLink, m, Unstable(m.mutable_mut()));
  change.Done(ParentAttrOf(r));
  return AttrOf(std::move(r));
}

Status RemoteFs::UnlinkLast(posix::Ino parent, std::string_view name, posix::Ino ino) {
  if (!AnswerRemoveHere(parent, name, ino, /*parent_links=*/0)) return Unlink(parent, name);
  return Status::Ok();
}

Status RemoteFs::RmdirEmpty(posix::Ino parent, std::string_view name, posix::Ino ino) {
  // The parent loses the directory's "..".
  if (!client_->DirPuts() || !AnswerRemoveHere(parent, name, ino, /*parent_links=*/-1)) {
    return Rmdir(parent, name);
  }
  dir_attrs_->Forget(ino);
  return Status::Ok();
}

bool RemoteFs::AnswerRemoveHere(posix::Ino parent, std::string_view name, posix::Ino ino,
                                int parent_links) {
  if (!attr_log_ || !client_->RemovePuts() || !posix::ValidateName(name).ok()) return false;
  const posix::Timespec now = posix::Timespec::FromNanos(clock_->NowNanos());
  // As for a create (AnswerCreateHere): the parent's kept attributes take the time first.
  if (!dir_attrs_->Touch(parent, now, parent_links)) return false;
  if (!attr_log_->AnswerRemove(posix::RemovePut{parent, std::string(name), ino, now},
                               clock_->MonotonicNanos())) {
    dir_attrs_->Forget(parent);
    return false;
  }
  // The kernel sets the removed file's change time next (a SETATTR): answered ENOENT here.
  MarkGone(ino);
  return true;
}

Status RemoteFs::Unlink(posix::Ino parent, std::string_view name) {
  v1::Unlink m;
  m.set_parent(parent.value());
  m.set_name(std::string(name));
  DirChange change(dir_attrs_.get(), parent);
  auto r = Mutate<v1::UnlinkReply>(proto::kTypeUnlink, m, Unstable(m.mutable_mut()));
  change.Done(ParentAttrOf(r));
  if (r.ok() && r->has_target() && r->target().nlink() == 0 && !r->orphaned()) {
    MarkGone(posix::Ino(r->target().ino()));
  }
  return r.status();
}

Status RemoteFs::Rmdir(posix::Ino parent, std::string_view name) {
  v1::Rmdir m;
  m.set_parent(parent.value());
  m.set_name(std::string(name));
  DirChange change(dir_attrs_.get(), parent);
  auto r = Mutate<v1::RmdirReply>(proto::kTypeRmdir, m, Unstable(m.mutable_mut()));
  change.Done(ParentAttrOf(r));
  if (dir_attrs_ && r.ok() && r->ino() != 0) dir_attrs_->Forget(posix::Ino(r->ino()));
  return r.status();
}

Status RemoteFs::Rename(posix::Ino parent, std::string_view name, posix::Ino new_parent,
                        std::string_view new_name, uint32_t flags) {
  v1::Rename m;
  m.set_parent(parent.value());
  m.set_name(std::string(name));
  m.set_new_parent(new_parent.value());
  m.set_new_name(std::string(new_name));
  m.set_flags(flags);
  DirChange from(dir_attrs_.get(), parent);
  DirChange to(new_parent != parent ? dir_attrs_.get() : nullptr, new_parent);
  auto r = Mutate<v1::RenameReply>(proto::kTypeRename, m, Unstable(m.mutable_mut()));
  from.Done(ParentAttrOf(r));
  if (r.ok() && r->has_new_parent_attr()) to.Done(FromProto(r->new_parent_attr()));
  if (dir_attrs_ && r.ok()) {
    // A directory moved or replaced has a new ctime (and ".."), or is gone.
    if (r->has_moved()) dir_attrs_->Forget(posix::Ino(r->moved().ino()));
    if (r->has_replaced()) dir_attrs_->Forget(posix::Ino(r->replaced().ino()));
  }
  return r.status();
}

Result<std::string> RemoteFs::Readlink(posix::Ino ino) {
  if (attr_log_) ARCHIL_RETURN_IF_ERROR(SendCreatesIf(attr_log_->Unsent(ino)));
  v1::ReadLink m;
  m.set_ino(ino.value());
  ARCHIL_ASSIGN_OR_RETURN(auto r, client_->CallAs<v1::ReadLinkReply>(proto::kTypeReadLink, m));
  return r.target();
}

Result<posix::DirPage> RemoteFs::ReadDir(posix::Ino dir, uint64_t after_cookie,
                                         size_t max_entries) {
  return ReadDirPage(dir, after_cookie, max_entries, /*plus=*/false);
}

Result<posix::DirPage> RemoteFs::ReadDirPlus(posix::Ino dir, uint64_t after_cookie,
                                             size_t max_entries) {
  return ReadDirPage(dir, after_cookie, max_entries, /*plus=*/true);
}

Result<posix::DirPage> RemoteFs::ReadDirPage(posix::Ino dir, uint64_t after_cookie,
                                             size_t max_entries, bool plus) {
  if (attr_log_) {
    ARCHIL_RETURN_IF_ERROR(SendCreatesIf(attr_log_->UnsentIn(dir) || attr_log_->Unsent(dir)));
  }
  v1::ReadDir m;
  m.set_dir(dir.value());
  m.set_cookie(after_cookie);
  m.set_max_entries(static_cast<uint32_t>(std::min<size_t>(max_entries, 4096)));
  m.set_plus(plus);
  ARCHIL_ASSIGN_OR_RETURN(auto r, client_->CallAs<v1::ReadDirReply>(proto::kTypeReadDir, m));
  posix::DirPage page;
  page.eof = r.eof();
  for (const v1::DirEntry& e : r.entries()) {
    posix::DirEntry d{e.name(), posix::Ino(e.ino()), (e.type() & 017) << 12, e.cookie(),
                      std::nullopt};
    if (plus && e.has_attr()) {
      d.attr = FromProto(e.attr());
      if (attr_log_) attr_log_->Overlay(&*d.attr);
    }
    page.entries.push_back(std::move(d));
  }
  return page;
}

Result<std::string> RemoteFs::GetXattr(posix::Ino ino, std::string_view name) {
  if (attr_log_) ARCHIL_RETURN_IF_ERROR(SendCreatesIf(attr_log_->Unsent(ino)));
  v1::GetXattr m;
  m.set_ino(ino.value());
  m.set_name(std::string(name));
  ARCHIL_ASSIGN_OR_RETURN(auto r, client_->CallAs<v1::GetXattrReply>(proto::kTypeGetXattr, m));
  return r.value();
}

Status RemoteFs::SetXattr(posix::Ino ino, std::string_view name, std::string_view value,
                          uint32_t flags) {
  v1::SetXattr m;
  m.set_ino(ino.value());
  m.set_name(std::string(name));
  m.set_value(std::string(value));
  m.set_flags(flags);
  DirChange change(dir_attrs_.get(), ino);  // a new ctime
  return Mutate<v1::SetXattrReply>(proto::kTypeSetXattr, m, Unstable(m.mutable_mut())).status();
}

Result<std::vector<std::string>> RemoteFs::ListXattr(posix::Ino ino) {
  if (attr_log_) ARCHIL_RETURN_IF_ERROR(SendCreatesIf(attr_log_->Unsent(ino)));
  v1::ListXattr m;
  m.set_ino(ino.value());
  ARCHIL_ASSIGN_OR_RETURN(auto r, client_->CallAs<v1::ListXattrReply>(proto::kTypeListXattr, m));
  return std::vector<std::string>(r.names().begin(), r.names().end());
}

Status RemoteFs::RemoveXattr(posix::Ino ino, std::string_view name) {
  v1::RemoveXattr m;
  m.set_ino(ino.value());
  m.set_name(std::string(name));
  DirChange change(dir_attrs_.get(), ino);  // a new ctime
  return Mutate<v1::RemoveXattrReply>(proto::kTypeRemoveXattr, m, Unstable(m.mutable_mut()))
      .status();
}

Result<std::string> RemoteFs::Read(posix::Ino ino, uint64_t offset, size_t length) {
  // Data written here and not yet sent is not on the disk, nor a file created here: send them
  // first.
  if (attr_log_) {
    ARCHIL_RETURN_IF_ERROR(SendCreatesIf(attr_log_->Unsent(ino)));
  }
  std::string out;
  while (out.size() < length) {
    v1::Read m;
    m.set_ino(ino.value());
    m.set_offset(offset + out.size());
    m.set_length(static_cast<uint32_t>(std::min(kChunk, length - out.size())));
    std::string data;
    ARCHIL_ASSIGN_OR_RETURN(
        auto r, client_->CallAs<v1::ReadReply>(proto::kTypeRead, m, nullptr, {}, &data));
    if (Crc32c(data) != r.crc32c()) return Status::Errno(EIO, "read data failed its checksum");
    const bool at_eof = data.size() < m.length();
    if (out.empty()) {
      out = std::move(data);  // one piece: nearly every read
    } else {
      out += data;
    }
    if (at_eof) break;
  }
  return out;
}

Result<posix::Attr> RemoteFs::Write(posix::Ino ino, uint64_t offset, std::string_view data) {
  return Send(ino, offset, data, /*stable=*/true);
}

Result<posix::Attr> RemoteFs::WriteBehind(posix::Ino ino, uint64_t offset, std::string_view data) {
  if (attr_log_ && client_->WritePuts()) {
    if (std::optional<posix::Attr> a = attr_log_->AnswerWrite(
            ino, offset, data, kMaxWriteAnswered, posix::Timespec::FromNanos(clock_->NowNanos()),
            clock_->MonotonicNanos())) {
      return *a;
    }
  }
  return Send(ino, offset, data, /*stable=*/!client_->Unstable());
}

Result<posix::Attr> RemoteFs::Send(posix::Ino ino, uint64_t offset, std::string_view data,
                                   bool stable) {
  if (data.empty()) return GetAttr(ino);
  Result<posix::Attr> last = Status::Errno(EIO, "nothing written");
  for (size_t done = 0; done < data.size();) {
    const std::string_view piece = data.substr(done, kChunk);
    v1::Write m;
    m.set_ino(ino.value());
    m.set_offset(offset + done);
    m.set_crc32c(Crc32c(piece));
    m.set_stable(stable);
    m.mutable_mut()->set_unstable(!stable);
    last = AttrOf(Mutate<v1::WriteReply>(proto::kTypeWrite, m, m.mutable_mut(), piece));
    if (!last.ok()) return last;
    done += piece.size();
  }
  return last;
}

Status RemoteFs::Fallocate(posix::Ino ino, uint32_t mode, uint64_t offset, uint64_t length) {
  v1::Fallocate m;
  m.set_ino(ino.value());
  m.set_mode(mode);
  m.set_offset(offset);
  m.set_length(length);
  return Mutate<v1::FallocateReply>(proto::kTypeFallocate, m, Unstable(m.mutable_mut())).status();
}

Result<posix::StatFs> RemoteFs::Statfs() {
  v1::StatFs m;
  Result<v1::StatFsReply> r = DiskClient::ParseAs<v1::StatFsReply>(
      client_->CallWithin(kStatfsBudgetMs, proto::kTypeStatFs, m));
  if (!r.ok()) {
    if (r.status().code() == Status::Code::kUnavailable) {
      MutexLock lock(&mu_);
      if (last_statfs_) return *last_statfs_;  // the server is away: `df` must not hang
    }
    return r.status();
  }
  posix::StatFs s;
  s.block_size = r->bsize();
  s.blocks = r->blocks();
  s.blocks_free = r->bfree();
  s.files = r->files();
  s.files_free = r->ffree();
  s.name_max = r->namemax();
  MutexLock lock(&mu_);
  last_statfs_ = s;
  return s;
}

Status RemoteFs::Open(posix::Ino ino, posix::HolderId) {
  v1::Open m;
  m.set_ino(ino.value());
  return Mutate<v1::OpenReply>(proto::kTypeOpen, m, m.mutable_mut()).status();
}

Status RemoteFs::Release(posix::Ino ino, posix::HolderId) {
  v1::Release m;
  m.set_ino(ino.value());
  return Mutate<v1::ReleaseReply>(proto::kTypeRelease, m, m.mutable_mut()).status();
}

Status RemoteFs::DropHolder(posix::HolderId) { return Status::Ok(); }

}  // namespace archil::client
