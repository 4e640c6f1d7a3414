#include "server/requests.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <functional>
#include <optional>

#include "base/crc32c.h"
#include "proto/validate.h"
#include "server/attr_convert.h"

namespace archil::server {

namespace {

using proto::As;
using proto::WireStatus;

Response Ok(const proto::Message& reply) {
  return Response{WireStatus::kOk, reply.SerializeAsString(), {}, false};
}

Response FromStatus(const Status& s) {
  return ErrorResponse(proto::WireStatusForErrno(ErrnoFor(s)), s.message());
}

CachedReply CachedError(const Status& s) {
  Response r = FromStatus(s);
  return CachedReply{r.status, std::move(r.body)};
}

posix::Ino Ino(uint64_t v) { return posix::Ino(v); }
posix::Owner OwnerOf(const v1::Caller& c) { return posix::Owner{c.uid(), c.gid()}; }

// ---- the slot rule (§7) ----

// `reply`, saying if it is an error that the request's attribute puts were applied (§5.3.2). An
// error answer that does not say so (every other path to one) means that they were not.
CachedReply PutsApplied(CachedReply reply) {
  v1::ErrorReply e;
  if (reply.status == WireStatus::kOk || !e.ParseFromString(reply.body)) return reply;
  e.set_puts_applied(true);
  reply.body = e.SerializeAsString();
  return reply;
}

posix::Puts PutsOf(const v1::Mut& mut) {
  posix::Puts puts;
  puts.creates.reserve(static_cast<size_t>(mut.creates_size()));
  for (const v1::CreatePut& c : mut.creates()) {
    puts.creates.push_back(posix::CreatePut{posix::Ino(c.parent()), c.name(), posix::Ino(c.ino()),
                                            c.mode(), static_cast<uint32_t>(c.rdev()), c.uid(),
                                            c.gid(), posix::Timespec::FromNanos(c.time_ns())});
  }
  puts.writes.reserve(static_cast<size_t>(mut.writes_size()));
  for (const v1::WritePut& w : mut.writes()) {
    puts.writes.push_back(posix::WritePut{posix::Ino(w.ino()), w.offset(), w.data()});
  }
  puts.attrs.reserve(static_cast<size_t>(mut.puts_size()));
  for (const v1::AttrPut& p : mut.puts()) puts.attrs.push_back(FromProto(p));
  puts.removes.reserve(static_cast<size_t>(mut.removes_size()));
  for (const v1::RemovePut& r : mut.removes()) {
    puts.removes.push_back(posix::RemovePut{posix::Ino(r.parent()), r.name(), posix::Ino(r.ino()),
                                            posix::Timespec::FromNanos(r.time_ns())});
  }
  return puts;
}

// The creates, writes, attribute changes and removes the client answered itself and sent ahead of
// this request (§5.3.2), in one commit before it; not synced (the request's own sync, or the next
// COMMIT, covers them).
Status ApplyPuts(Session& s, const v1::Mut& mut) {
  return s.fs().ApplyPuts(PutsOf(mut), engine::CommitHooks{.sync = false}, nullptr,
                          &s.identity().id);
}

// Who applies the attribute puts a request carries (§5.3.2).
enum class Puts {
  kFirst,    // InSlot, in their own commit before the request's
  kBody,     // the body itself (PUT_ATTRS: they are the request)
  kRefused,  // nobody: the request is refused (its answer does not say they were applied)
};

// Runs `body` for the request (mut.slot, mut.seq) if the slot table says it is new, with the
// attribute puts it carries as `puts` says; answers a retry from the cache.
Response InSlot(Session& s, const v1::Mut& mut, const std::function<CachedReply()>& body,
                Puts puts = Puts::kFirst) {
  CachedReply cached;
  switch (s.slots().Begin(mut.slot(), mut.seq(), &cached)) {
    case SlotVerdict::kInvalid:
      return ErrorResponse(WireStatus::kSlotInvalid, "slot beyond the session's slots");
    case SlotVerdict::kMisordered:
      return ErrorResponse(WireStatus::kSeqMisordered, "seq out of order for its slot");
    case SlotVerdict::kReplay:
      return Response{cached.status, std::move(cached.body), {}, true};
    case SlotVerdict::kExecute:
      break;
  }
  CachedReply reply;
  if (!proto::CarriesPuts(mut) || puts != Puts::kFirst) {
    reply = body();
  } else if (Status st = ApplyPuts(s, mut); !st.ok()) {
    reply = CachedError(st);
  } else {
    reply = PutsApplied(body());
  }
  s.slots().Finish(mut.slot(), mut.seq(), reply);
  return Response{reply.status, std::move(reply.body), {}, false};
}

// The engine call of a durable mutation, with `hooks` attached to its commit: fills *result for
// operations that return attributes.
using Hooks = engine::CommitHooks;
using Call = std::function<Status(const Hooks& hooks, std::optional<posix::Attr>* result)>;
// The encoded reply of a successful mutation, from its result (nullptr: none).
using Build = std::function<std::string(const engine::CommitResult& result)>;

// Runs `call` so that its commit also writes the slot record holding the reply `build` makes
// (engine/commit/commit_hooks.h), and runs `on_queued` once that commit is queued. Inside InSlot.
CachedReply Recorded(Session& s, const v1::Mut& mut, uint16_t type, const Call& call,
                     const Build& build, const std::function<void()>& on_queued = {}) {
  std::optional<std::string> body;  // made inside the commit
  std::optional<posix::Attr> result;
  const Hooks hooks{
      .epilogue = s.engine().SlotEpilogue(s.identity().disk, s.identity().id, mut.slot(),
                                          [&](const engine::CommitResult& r) {
                                            body = build(r);
                                            return engine::SlotRecord{0, type, mut.seq(), *body};
                                          }),
      .on_queued = on_queued,
      .sync = !mut.unstable()};
  Status st = call(hooks, &result);
  if (!st.ok()) return CachedError(st);
  // An operation that changed nothing commits nothing (and needs no record to be exactly-once).
  if (!body) body = build(engine::CommitResult{result ? &*result : nullptr});
  return CachedReply{WireStatus::kOk, std::move(*body)};
}

// A change of names' reply: the new inode's attributes (for those that make one) and what the
// change did to directories (engine::Touched): their attributes after it, and what it removed or
// moved. A client that alone changes the disk answers the kernel's next GETATTR of a parent from
// these (protocol.md §7).
template <typename Reply>
void FillNames(const engine::CommitResult& c, Reply* r) {
  if constexpr (requires { r->mutable_attr(); }) {
    if (c.attr) ToProto(*c.attr, r->mutable_attr());
  }
  const engine::Touched* t = c.touched;
  if (t == nullptr) return;
  if (t->parent) ToProto(*t->parent, r->mutable_parent_attr());
  if constexpr (requires { r->mutable_new_parent_attr(); }) {
    if (t->new_parent) ToProto(*t->new_parent, r->mutable_new_parent_attr());
    if (t->moved) ToProto(*t->moved, r->mutable_moved());
    if (t->replaced) ToProto(*t->replaced, r->mutable_replaced());
  }
  if constexpr (requires { r->set_ino(0); }) {
    if (t->removed_dir) r->set_ino(t->removed_dir->value());
  }
  if constexpr (requires { r->set_orphaned(false); }) {
    if (t->unlinked) {
      ToProto(*t->unlinked, r->mutable_target());
      r->set_orphaned(t->unlinked->nlink == 0 && !t->purged);
    }
  }
}

template <typename Reply>
Build NamesReply() {
  return [](const engine::CommitResult& c) {
    Reply r;
    FillNames(c, &r);
    return r.SerializeAsString();
  };
}

template <typename Reply>
Build EmptyReply() {
  return [](const engine::CommitResult&) { return Reply().SerializeAsString(); };
}

Call AttrCall(std::function<Result<posix::Attr>(const Hooks&)> fn) {
  return [fn = std::move(fn)](const Hooks& hooks, std::optional<posix::Attr>* out) {
    Result<posix::Attr> r = fn(hooks);
    if (!r.ok()) return r.status();
    *out = *r;
    return Status::Ok();
  };
}

Call StatusCall(std::function<Status(const Hooks&)> fn) {
  return
      [fn = std::move(fn)](const Hooks& hooks, std::optional<posix::Attr>*) { return fn(hooks); };
}

// Keeps an inode the client has open alive past its last name (protocol.md §5.3 "Orphans").
void HoldIfOpen(Session& s, bool keep, posix::Ino parent, std::string_view name) {
  if (!keep) return;
  Result<posix::Attr> a = s.fs().Lookup(parent, name);
  if (a.ok() && !S_ISDIR(a->mode)) (void)s.fs().Open(a->ino, s.holder());
}

// ---- requests ----

Response Create(Session& s, const v1::Create& m) {
  engine::DiskFs& fs = s.fs();
  return InSlot(s, m.mut(), [&]() -> CachedReply {
    const bool excl = (m.open_flags() & O_EXCL) != 0;
    if (!excl) {
      Result<posix::Attr> existing = fs.Lookup(Ino(m.parent()), m.name());
      if (existing.ok()) {
        if (S_ISDIR(existing->mode)) return CachedError(Status::Errno(EISDIR, "a directory"));
        auto opened = [](const engine::CommitResult& c) {
          v1::CreateReply r;
          if (c.attr) ToProto(*c.attr, r.mutable_attr());
          r.set_created(false);
          return r.SerializeAsString();
        };
        if ((m.open_flags() & O_TRUNC) && S_ISREG(existing->mode) && existing->size > 0) {
          posix::SetAttrRequest trunc;
          trunc.size = 0;
          return Recorded(s, m.mut(), proto::kTypeCreate, AttrCall([&](const Hooks& h) {
                            return fs.SetAttr(existing->ino, trunc, h);
                          }),
                          opened);
        }
        return CachedReply{WireStatus::kOk, opened(engine::CommitResult{&*existing})};
      }
    }
    return Recorded(s, m.mut(), proto::kTypeCreate, AttrCall([&](const Hooks& h) {
                      return fs.Mknod(Ino(m.parent()), m.name(), S_IFREG | (m.mode() & 07777), 0,
                                      OwnerOf(m.caller()), h);
                    }),
                    [](const engine::CommitResult& c) {
                      v1::CreateReply r;
                      FillNames(c, &r);
                      r.set_created(true);
                      return r.SerializeAsString();
                    });
  });
}

Response Read(Session& s, const v1::Read& m) {
  // The engine refuses directories and special files itself, and reads short only at EOF.
  Result<std::string> data = s.fs().Read(Ino(m.ino()), m.offset(), m.length());
  if (!data.ok()) return FromStatus(data.status());
  v1::ReadReply r;
  r.set_crc32c(Crc32c(*data));
  if (data->size() < m.length()) {
    r.set_eof(true);
    r.set_size(m.offset() + data->size());
  }
  Response out = Ok(r);
  out.payload = std::move(data).value();
  return out;
}

Response ReadDir(Session& s, const v1::ReadDir& m) {
  posix::FileSystem& fs = s.fs();
  Result<posix::Attr> dir = fs.GetAttr(Ino(m.dir()));
  if (!dir.ok()) return FromStatus(dir.status());
  Result<posix::DirPage> page = m.plus() ? fs.ReadDirPlus(Ino(m.dir()), m.cookie(), m.max_entries())
                                         : fs.ReadDir(Ino(m.dir()), m.cookie(), m.max_entries());
  if (!page.ok()) return FromStatus(page.status());
  v1::ReadDirReply r;
  ToProto(*dir, r.mutable_dir_attr());
  // The page stops at the client's byte budget, and always within a reply frame: 4,096 entries
  // of 255-byte names with their attributes would not fit one.
  size_t budget = proto::kReplyBodyBudget;
  if (m.max_bytes() != 0) budget = std::min<size_t>(budget, m.max_bytes());
  size_t bytes = 0;
  r.set_eof(page->eof);
  for (const posix::DirEntry& e : page->entries) {
    v1::DirEntry* d = r.add_entries();
    d->set_name(e.name);
    d->set_ino(e.ino.value());
    d->set_type((e.type >> 12) & 017);  // S_IFMT bits -> DT_*
    d->set_cookie(e.cookie);
    if (e.attr) ToProto(*e.attr, d->mutable_attr());
    const size_t cost = d->ByteSizeLong() + 4;  // with its field tag and length
    if (bytes + cost > budget && r.entries_size() > 1) {
      r.mutable_entries()->RemoveLast();
      r.set_eof(false);
      break;
    }
    bytes += cost;
  }
  return Ok(r);
}

Response Lseek(Session& s, const v1::Lseek& m) {
  Result<posix::Attr> a = s.fs().GetAttr(Ino(m.ino()));
  if (!a.ok()) return FromStatus(a.status());
  // Every byte below the size is data: a file reports no holes (allowed by POSIX).
  if (m.offset() >= a->size) return ErrorResponse(WireStatus::kNoSuchOffset, "offset past EOF");
  v1::LseekReply r;
  r.set_offset(m.whence() == SEEK_DATA ? m.offset() : a->size);
  return Ok(r);
}

Response StatFs(Session& s) {
  Result<posix::StatFs> st = s.fs().Statfs();
  if (!st.ok()) return FromStatus(st.status());
  v1::StatFsReply r;
  r.set_blocks(st->blocks);
  r.set_bfree(st->blocks_free);
  r.set_bavail(st->blocks_free);
  r.set_files(st->files);
  r.set_ffree(st->files_free);
  r.set_bsize(static_cast<uint32_t>(st->block_size));
  r.set_frsize(static_cast<uint32_t>(st->block_size));
  r.set_namemax(st->name_max);
  return Ok(r);
}

// Runs a durable mutation in its slot: its commit writes the slot record of its reply (Recorded).
Response Durable(Session& s, uint16_t type, const v1::Mut& mut, const Call& call,
                 const Build& build, const std::function<void()>& on_queued = {}) {
  return InSlot(s, mut, [&] { return Recorded(s, mut, type, call, build, on_queued); });
}

Response Mutation(Session& s, uint16_t type, const proto::Message& req);

}  // namespace

Response ErrorResponse(WireStatus status, std::string_view message) {
  v1::ErrorReply e;
  e.set_message(std::string(message));
  return Response{status, e.SerializeAsString(), {}, false};
}

Response DelayResponse(std::string_view message, uint32_t retry_after_ms) {
  v1::ErrorReply e;
  e.set_message(std::string(message));
  e.set_retry_after_ms(retry_after_ms);
  return Response{WireStatus::kDelay, e.SerializeAsString(), {}, false};
}

namespace {
// A message type this server does not serve.
Response Unsupported() {
  return ErrorResponse(WireStatus::kUnsupportedType, "not served by this server");
}
}  // namespace

Response Refuse(Session& session, const v1::Mut& mut, Response refusal, bool apply_puts) {
  return InSlot(
      session, mut,
      [&] {
        return CachedReply{refusal.status, refusal.body};
      },
      apply_puts ? Puts::kFirst : Puts::kRefused);
}

Response Execute(Session& session, uint16_t type, const proto::Message& req,
                 std::string_view payload, const std::function<void()>& on_queued) {
  engine::DiskFs& fs = session.fs();
  switch (type) {
    case proto::kTypeLookup: {
      const auto& m = As<v1::Lookup>(req);
      Result<posix::Attr> a = fs.Lookup(Ino(m.parent()), m.name());
      v1::LookupReply r;
      if (!a.ok() && ErrnoFor(a.status()) != ENOENT) return FromStatus(a.status());
      // Not found: the name, or the directory itself (removed, by this client or another, while
      // the kernel still held it)? Only the first is an answer; the second is STALE.
      if (!a.ok() && !fs.GetAttr(Ino(m.parent())).ok()) {
        return ErrorResponse(WireStatus::kStale, "the directory no longer exists");
      }
      r.set_found(a.ok());
      if (a.ok()) ToProto(*a, r.mutable_attr());
      return Ok(r);
    }
    case proto::kTypeGetAttr: {
      Result<posix::Attr> a = fs.GetAttr(Ino(As<v1::GetAttr>(req).ino()));
      if (!a.ok()) return FromStatus(a.status());
      v1::GetAttrReply r;
      ToProto(*a, r.mutable_attr());
      return Ok(r);
    }
    case proto::kTypeReadLink: {
      Result<std::string> t = fs.Readlink(Ino(As<v1::ReadLink>(req).ino()));
      if (!t.ok()) return FromStatus(t.status());
      v1::ReadLinkReply r;
      r.set_target(*t);
      return Ok(r);
    }
    case proto::kTypeReadDir:
      return ReadDir(session, As<v1::ReadDir>(req));
    case proto::kTypeStatFs:
      return StatFs(session);
    case proto::kTypeRead:
      return Read(session, As<v1::Read>(req));
    case proto::kTypeLseek:
      return Lseek(session, As<v1::Lseek>(req));
    case proto::kTypeGetXattr: {
      const auto& m = As<v1::GetXattr>(req);
      Result<std::string> v = fs.GetXattr(Ino(m.ino()), m.name());
      if (!v.ok()) return FromStatus(v.status());
      v1::GetXattrReply r;
      r.set_value(*v);
      return Ok(r);
    }
    case proto::kTypeListXattr: {
      Result<std::vector<std::string>> names = fs.ListXattr(Ino(As<v1::ListXattr>(req).ino()));
      if (!names.ok()) return FromStatus(names.status());
      v1::ListXattrReply r;
      for (const std::string& n : *names) r.add_names(n);
      return Ok(r);
    }
    case proto::kTypeCommit: {
      // Every mutation answered before this request is durable once it is answered.
      Status st = fs.Sync();
      if (!st.ok()) return FromStatus(st);
      return Ok(v1::CommitReply());
    }
    case proto::kTypeWrite: {
      const auto& m = As<v1::Write>(req);
      return Durable(
          session, type, m.mut(),
          AttrCall([&](const Hooks& h) { return fs.Write(Ino(m.ino()), m.offset(), payload, h); }),
          [&m](const engine::CommitResult& c) {
            v1::WriteReply r;
            if (c.attr) ToProto(*c.attr, r.mutable_attr());
            r.set_stable(!m.mut().unstable());
            return r.SerializeAsString();
          },
          on_queued);
    }
    default:
      return Mutation(session, type, req);
  }
}

namespace {

// The mutations of names: one commit each, its reply in the slot record.
Response Names(Session& s, uint16_t type, const proto::Message& req) {
  engine::DiskFs& fs = s.fs();
  switch (type) {
    case proto::kTypeMkdir: {
      const auto& m = As<v1::Mkdir>(req);
      return Durable(s, type, m.mut(), AttrCall([&](const Hooks& h) {
                       return fs.Mkdir(Ino(m.parent()), m.name(), m.mode() & 07777,
                                       OwnerOf(m.caller()), h);
                     }),
                     NamesReply<v1::MkdirReply>());
    }
    case proto::kTypeMknod: {
      const auto& m = As<v1::Mknod>(req);
      return Durable(s, type, m.mut(), AttrCall([&](const Hooks& h) {
                       return fs.Mknod(Ino(m.parent()), m.name(), m.mode(),
                                       static_cast<uint32_t>(m.rdev()), OwnerOf(m.caller()), h);
                     }),
                     NamesReply<v1::MknodReply>());
    }
    case proto::kTypeSymlink: {
      const auto& m = As<v1::Symlink>(req);
      return Durable(s, type, m.mut(), AttrCall([&](const Hooks& h) {
                       return fs.Symlink(Ino(m.parent()), m.name(), m.target(), OwnerOf(m.caller()),
                                         h);
                     }),
                     NamesReply<v1::SymlinkReply>());
    }
    case proto::kTypeLink: {
      const auto& m = As<v1::Link>(req);
      return Durable(s, type, m.mut(), AttrCall([&](const Hooks& h) {
                       return fs.Link(Ino(m.ino()), Ino(m.new_parent()), m.new_name(), h);
                     }),
                     NamesReply<v1::LinkReply>());
    }
    case proto::kTypeUnlink: {
      const auto& m = As<v1::Unlink>(req);
      return Durable(s, type, m.mut(), StatusCall([&](const Hooks& h) {
                       HoldIfOpen(s, m.keep_if_open(), Ino(m.parent()), m.name());
                       return fs.Unlink(Ino(m.parent()), m.name(), h);
                     }),
                     NamesReply<v1::UnlinkReply>());
    }
    case proto::kTypeRmdir: {
      const auto& m = As<v1::Rmdir>(req);
      return Durable(s, type, m.mut(), StatusCall([&](const Hooks& h) {
                       return fs.Rmdir(Ino(m.parent()), m.name(), h);
                     }),
                     NamesReply<v1::RmdirReply>());
    }
    case proto::kTypeRename: {
      const auto& m = As<v1::Rename>(req);
      return Durable(s, type, m.mut(), StatusCall([&](const Hooks& h) {
                       HoldIfOpen(s, m.keep_target_if_open(), Ino(m.new_parent()), m.new_name());
                       return fs.Rename(Ino(m.parent()), m.name(), Ino(m.new_parent()),
                                        m.new_name(), m.flags(), h);
                     }),
                     NamesReply<v1::RenameReply>());
    }
    default:
      return Unsupported();
  }
}

// The mutations of an inode's attributes, data extent and xattrs.
Response Attributes(Session& s, uint16_t type, const proto::Message& req) {
  engine::DiskFs& fs = s.fs();
  switch (type) {
    case proto::kTypeSetAttr: {
      const auto& m = As<v1::SetAttr>(req);
      return Durable(s, type, m.mut(), AttrCall([&](const Hooks& h) {
                       return fs.SetAttr(Ino(m.ino()), FromProto(m), h);
                     }),
                     [&m](const engine::CommitResult& c) {
                       v1::SetAttrReply r;
                       if (c.attr) ToProto(*c.attr, r.mutable_attr());
                       r.set_stable(!m.mut().unstable());
                       return r.SerializeAsString();
                     });
    }
    case proto::kTypeFallocate: {
      const auto& m = As<v1::Fallocate>(req);
      return Durable(s, type, m.mut(), StatusCall([&](const Hooks& h) {
                       return fs.Fallocate(Ino(m.ino()), m.mode(), m.offset(), m.length(), h);
                     }),
                     EmptyReply<v1::FallocateReply>());
    }
    case proto::kTypeSetXattr: {
      const auto& m = As<v1::SetXattr>(req);
      return Durable(s, type, m.mut(), StatusCall([&](const Hooks& h) {
                       return fs.SetXattr(Ino(m.ino()), m.name(), m.value(), m.flags(), h);
                     }),
                     EmptyReply<v1::SetXattrReply>());
    }
    case proto::kTypeRemoveXattr: {
      const auto& m = As<v1::RemoveXattr>(req);
      return Durable(s, type, m.mut(), StatusCall([&](const Hooks& h) {
                       return fs.RemoveXattr(Ino(m.ino()), m.name(), h);
                     }),
                     EmptyReply<v1::RemoveXattrReply>());
    }
    default:
      return Unsupported();
  }
}

// OPEN and RELEASE: a holder's state, not durable; the reply is cached in memory only (§7).
Response Holders(Session& s, uint16_t type, const proto::Message& req) {
  posix::FileSystem& fs = s.fs();
  switch (type) {
    case proto::kTypeOpen: {
      const auto& m = As<v1::Open>(req);
      return InSlot(s, m.mut(), [&]() -> CachedReply {
        Status st = fs.Open(Ino(m.ino()), s.holder());
        if (!st.ok()) return CachedError(st);
        v1::OpenReply r;
        Result<posix::Attr> a = fs.GetAttr(Ino(m.ino()));
        if (a.ok()) ToProto(*a, r.mutable_attr());
        return CachedReply{WireStatus::kOk, r.SerializeAsString()};
      });
    }
    case proto::kTypeRelease: {
      const auto& m = As<v1::Release>(req);
      return InSlot(s, m.mut(), [&]() -> CachedReply {
        Status st = fs.Release(Ino(m.ino()), s.holder());
        if (!st.ok()) return CachedError(st);
        return CachedReply{WireStatus::kOk, v1::ReleaseReply().SerializeAsString()};
      });
    }
    default:
      return Unsupported();
  }
}

// Only the request's attribute puts (§5.3.2), with its slot record in their commit; with
// `commit`, answered once every mutation answered before it is durable, as COMMIT (§8.2): a retry
// answered from the reply cache too.
Response PutAttrs(Session& s, uint16_t type, const proto::Message& req) {
  const v1::PutAttrs& m = As<v1::PutAttrs>(req);
  const v1::Mut& mut = m.mut();
  Response r = InSlot(
      s, mut,
      [&] {
        const posix::Puts puts = PutsOf(mut);
        return Recorded(s, mut, type, StatusCall([&](const Hooks& h) {
                          return s.fs().ApplyPuts(puts, h, nullptr, &s.identity().id);
                        }),
                        EmptyReply<v1::PutAttrsReply>());
      },
      Puts::kBody);
  if (r.status != WireStatus::kOk || !m.commit()) return r;
  if (Status st = s.fs().Sync(); !st.ok()) return FromStatus(st);
  return r;
}

// Inode numbers for the creates the client answers itself (§5.3.3): the session's new range,
// recorded with the slot in one commit.
Response InoGrant(Session& s, uint16_t type, const proto::Message& req) {
  const auto& m = As<v1::InoGrant>(req);
  return Durable(s, type, m.mut(), StatusCall([&](const Hooks& h) {
                   return s.fs().GrantInos(s.identity().id, m.count(), h).status();
                 }),
                 [&](const engine::CommitResult& c) {
                   v1::InoGrantReply r;
                   r.set_first(c.granted_first);
                   r.set_count(m.count());
                   return r.SerializeAsString();
                 });
}

// One synced commit: the checkpoint's record, the disk's next epoch, the slot.
Response CheckpointCreate(Session& s, uint16_t type, const proto::Message& req) {
  const auto& m = As<v1::CheckpointCreate>(req);
  // A session of a checkpoint is a read-only view; a checkpoint would be of the live disk.
  if (!s.identity().checkpoint.empty()) {
    return Refuse(
        s, m.mut(),
        ErrorResponse(WireStatus::kReadOnly,
                      "this session is a read-only view of checkpoint " + s.identity().checkpoint +
                          ": checkpoints are taken through a session of the disk"));
  }
  return Durable(s, type, m.mut(), StatusCall([&](const Hooks& h) {
                   return s.fs().Checkpoint(m.name(), h).status();
                 }),
                 [](const engine::CommitResult& c) {
                   v1::CheckpointCreateReply r;
                   r.set_epoch(c.checkpoint_epoch);
                   r.set_created_at_ns(c.checkpoint_created_ns);
                   return r.SerializeAsString();
                 });
}

Response Mutation(Session& s, uint16_t type, const proto::Message& req) {
  switch (type) {
    case proto::kTypeCreate:
      return Create(s, As<v1::Create>(req));
    case proto::kTypeMkdir:
    case proto::kTypeMknod:
    case proto::kTypeSymlink:
    case proto::kTypeLink:
    case proto::kTypeUnlink:
    case proto::kTypeRmdir:
    case proto::kTypeRename:
      return Names(s, type, req);
    case proto::kTypeSetAttr:
    case proto::kTypeFallocate:
    case proto::kTypeSetXattr:
    case proto::kTypeRemoveXattr:
      return Attributes(s, type, req);
    case proto::kTypeCheckpointCreate:
      return CheckpointCreate(s, type, req);
    case proto::kTypePutAttrs:
      return PutAttrs(s, type, req);
    case proto::kTypeInoGrant:
      return InoGrant(s, type, req);
    case proto::kTypeOpen:
    case proto::kTypeRelease:
      return Holders(s, type, req);
    default:
      return Unsupported();
  }
}

}  // namespace

}  // namespace archil::server
