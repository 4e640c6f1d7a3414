#include "fs/mount_core.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>

namespace archil::fs {

namespace {
// A bound on the directories whose mode and gid are remembered (a few MB at most); past it the
// memory starts again empty, and a create in a forgotten directory costs one GETATTR.
constexpr size_t kMaxRememberedDirs = 1 << 16;
constexpr std::string_view kCapabilityXattr = "security.capability";
constexpr uint64_t kDotOffset = 1;
constexpr uint64_t kDotDotOffset = 2;

// The read-ahead's chunk for a window: a quarter of it, 4 KiB to 1 MiB.
size_t ChunkFor(size_t window) { return std::clamp<size_t>(window / 4, 4096, 1 << 20); }
}  // namespace

MountCore::MountCore(posix::FileSystem* fs, Ino root, MountOptions options)
    : fs_(fs),
      root_(root),
      options_(options),
      read_ahead_(fs, ReadAheadOptions{.window = options.read_ahead_bytes,
                                       .chunk = ChunkFor(options.read_ahead_bytes)}),
      order_(ListingOrderLimits{.bytes_ahead = options.read_ahead_bytes,
                                .max_file_bytes = ChunkFor(options.read_ahead_bytes)}) {}

NodeId MountCore::NodeOf(Ino ino) const {
  if (ino == root_) return kRootNode;
  if (ino.value() == kRootNode) return root_.value();
  return ino.value();
}

Ino MountCore::InoOf(NodeId node) const {
  if (node == kRootNode) return root_;
  if (node == root_.value()) return Ino(kRootNode);
  return Ino(node);
}

Status MountCore::Writable() const {
  if (options_.read_only) return Status::Errno(EROFS, "the disk is mounted read-only");
  return Status::Ok();
}

NodeAttr MountCore::Seen(const Attr& attr) {
  if (S_ISREG(attr.mode)) read_ahead_.Sized(attr.ino, attr.size);
  if (S_ISDIR(attr.mode)) {
    MutexLock lock(&mu_);
    if (dirs_.size() >= kMaxRememberedDirs) dirs_.clear();
    dirs_[attr.ino.value()] = Parent{attr.mode, attr.gid};
  }
  return NodeAttr{NodeOf(attr.ino), attr};
}

Result<NodeAttr> MountCore::SeenOr(Result<Attr> r) {
  if (!r.ok()) return r.status();
  return Seen(r.value());
}

Result<MountCore::Parent> MountCore::ParentOf(Ino parent) {
  {
    MutexLock lock(&mu_);
    auto it = dirs_.find(parent.value());
    if (it != dirs_.end()) return it->second;
  }
  ARCHIL_ASSIGN_OR_RETURN(Attr a, fs_->GetAttr(parent));
  Seen(a);
  return Parent{a.mode, a.gid};
}

Result<posix::Owner> MountCore::OwnerFor(Ino parent, Caller caller, uint32_t* mode) {
  ARCHIL_ASSIGN_OR_RETURN(Parent p, ParentOf(parent));
  posix::Owner owner{caller.uid, caller.gid};
  if (p.mode & S_ISGID) {
    owner.gid = p.gid;
    if (S_ISDIR(*mode)) *mode |= S_ISGID;
  }
  return owner;
}

Result<NodeAttr> MountCore::Lookup(NodeId parent, std::string_view name) {
  const Ino p = InoOf(parent);
  if (known_.Absent(p, name)) {
    ++local_negative_lookups_;
    return Status::Errno(ENOENT, "no such name in a directory this mount created");
  }
  const uint64_t generation = last_.Generation();
  // A name this mount saw naming an inode (the kernel asks again before every exclusive create:
  // `mkdir -p`, tar's mkdir of each directory it meets again). "." and ".." are never kept.
  const bool dots = name == "." || name == "..";  // a ".." kept would not follow a move
  if (std::optional<LastNames::Named> seen = dots ? std::nullopt : last_.Find(p, name)) {
    return SeenOr(Named(p, name, generation, fs_->LookupSeen(p, name, seen->ino)));
  }
  return SeenOr(Named(p, name, generation, fs_->Lookup(p, name)));
}

Result<Attr> MountCore::Named(Ino dir, std::string_view name, uint64_t generation,
                              Result<Attr> answer) {
  if (answer.ok()) last_.Saw(dir, name, *answer, generation);
  return answer;
}

Result<NodeAttr> MountCore::GetAttr(NodeId node) { return SeenOr(fs_->GetAttr(InoOf(node))); }

Result<NodeAttr> MountCore::SetAttr(NodeId node, const posix::SetAttrRequest& request) {
  ARCHIL_RETURN_IF_ERROR(Writable());
  const Ino ino = InoOf(node);
  if (!request.size) return SeenOr(fs_->SetAttr(ino, request));
  return SeenOr(ChangingData(ino, [&] { return fs_->SetAttr(ino, request); }));
}

Result<std::string> MountCore::Readlink(NodeId node) { return fs_->Readlink(InoOf(node)); }

Result<NodeAttr> MountCore::Mknod(NodeId parent, std::string_view name, uint32_t mode,
                                  uint32_t rdev, Caller caller) {
  ARCHIL_RETURN_IF_ERROR(Writable());
  ChangingNames changing(&ends_);
  Ino p = InoOf(parent);
  ARCHIL_ASSIGN_OR_RETURN(posix::Owner owner, OwnerFor(p, caller, &mode));
  AddingName adding(&known_, p, name);
  const uint64_t generation = last_.Generation();
  Result<NodeAttr> made = SeenOr(Named(p, name, generation,
                                       adding.absent() ? fs_->MknodNew(p, name, mode, rdev, owner)
                                                       : fs_->Mknod(p, name, mode, rdev, owner)));
  // A new inode has no security.capability (nothing inherits one): the kernel's probe before
  // the first write(2) costs no request.
  if (made.ok()) NoCapabilities(InoOf(made->node));
  return made;
}

Result<NodeAttr> MountCore::Mkdir(NodeId parent, std::string_view name, uint32_t mode,
                                  Caller caller) {
  ARCHIL_RETURN_IF_ERROR(Writable());
  ChangingNames changing(&ends_);
  Ino p = InoOf(parent);
  uint32_t full = S_IFDIR | (mode & 07777);
  ARCHIL_ASSIGN_OR_RETURN(posix::Owner owner, OwnerFor(p, caller, &full));
  AddingName adding(&known_, p, name);
  const uint64_t generation = last_.Generation();
  Result<NodeAttr> made = SeenOr(Named(p, name, generation,
                                       adding.absent() ? fs_->MkdirNew(p, name, full & 07777, owner)
                                                       : fs_->Mkdir(p, name, full & 07777, owner)));
  if (made.ok()) known_.Created(InoOf(made->node));
  return made;
}

Result<NodeAttr> MountCore::Symlink(NodeId parent, std::string_view name, std::string_view target,
                                    Caller caller) {
  ARCHIL_RETURN_IF_ERROR(Writable());
  ChangingNames changing(&ends_);
  Ino p = InoOf(parent);
  uint32_t mode = S_IFLNK | 0777;
  ARCHIL_ASSIGN_OR_RETURN(posix::Owner owner, OwnerFor(p, caller, &mode));
  AddingName adding(&known_, p, name);
  const uint64_t generation = last_.Generation();
  return SeenOr(Named(p, name, generation, fs_->Symlink(p, name, target, owner)));
}

Result<NodeAttr> MountCore::Link(NodeId node, NodeId new_parent, std::string_view new_name) {
  ARCHIL_RETURN_IF_ERROR(Writable());
  ChangingNames changing(&ends_);
  AddingName adding(&known_, InoOf(new_parent), new_name);
  // The inode gets another name: what was seen of it may say it had one (LastNames).
  const Ino ino = InoOf(node);
  last_.Linking(ino);
  Result<NodeAttr> r = SeenOr(fs_->Link(ino, InoOf(new_parent), new_name));
  last_.Linking(ino);
  return r;
}

Result<bool> MountCore::HoldIfOpen(Ino parent, std::string_view name, Victim kind) {
  {
    MutexLock lock(&mu_);
    const uint64_t open_of_kind = kind == Victim::kDir      ? open_dirs_
                                  : kind == Victim::kNonDir ? open_.size() - open_dirs_
                                                            : open_.size();
    if (open_of_kind == 0) return true;
  }
  // The victim's number: as the mount saw it (the only name of its inode), else from the disk.
  Ino victim;
  if (std::optional<LastNames::Named> seen = last_.Find(parent, name)) {
    victim = seen->ino;
  } else {
    Result<Attr> asked = fs_->Lookup(parent, name);
    if (!asked.ok()) return false;  // the removal itself will say what is wrong
    victim = asked->ino;
  }
  const uint64_t ino = victim.value();
  {
    MutexLock lock(&mu_);
    auto it = open_.find(ino);
    if (it == open_.end()) return true;
    if (it->second.held) return false;
    it->second.held = true;
    ++held_;
  }
  Status s = fs_->Open(victim, posix::HolderId(0));
  if (!s.ok()) {
    MutexLock lock(&mu_);
    auto it = open_.find(ino);
    if (it != open_.end() && it->second.held) {
      it->second.held = false;
      --held_;
    }
    return s;
  }
  return false;
}

Status MountCore::Unlink(NodeId parent, std::string_view name) {
  ARCHIL_RETURN_IF_ERROR(Writable());
  ChangingNames changing(&ends_);
  Ino p = InoOf(parent);
  ARCHIL_ASSIGN_OR_RETURN(const bool none_open, HoldIfOpen(p, name, Victim::kNonDir));
  // The only name of an inode not open here: the inode goes with it.
  const std::optional<LastNames::Named> last = none_open ? last_.Find(p, name) : std::nullopt;
  Status answer = last && !last->dir ? fs_->UnlinkLast(p, name, last->ino) : fs_->Unlink(p, name);
  last_.Forget(p, name);
  return Removing(p, name, std::move(answer));
}

Status MountCore::Rmdir(NodeId parent, std::string_view name) {
  ARCHIL_RETURN_IF_ERROR(Writable());
  ChangingNames changing(&ends_);
  Ino p = InoOf(parent);
  ARCHIL_ASSIGN_OR_RETURN(const bool none_open, HoldIfOpen(p, name, Victim::kDir));
  // A directory this mount made and emptied, not open here: nothing else can be in it.
  const std::optional<LastNames::Named> last = none_open ? last_.Find(p, name) : std::nullopt;
  // What is remembered of the directory stays: inode numbers are never reused.
  Status answer = last && last->dir && known_.Empty(last->ino) ? fs_->RmdirEmpty(p, name, last->ino)
                                                               : fs_->Rmdir(p, name);
  last_.Forget(p, name);
  return Removing(p, name, std::move(answer));
}

Status MountCore::Rename(NodeId parent, std::string_view name, NodeId new_parent,
                         std::string_view new_name, uint32_t flags) {
  ARCHIL_RETURN_IF_ERROR(Writable());
  ChangingNames changing(&ends_);
  Ino np = InoOf(new_parent);
  // An exchange removes no name; a plain rename may replace (and so remove) the target.
  if (!(flags & posix::kRenameExchange))
    ARCHIL_RETURN_IF_ERROR(HoldIfOpen(np, new_name, Victim::kAny).status());
  // The source name stays in the known names: a rename between two links of one inode leaves
  // both in place, and a name kept there only costs a lookup.
  AddingName adding(&known_, np, new_name);
  const Ino p = InoOf(parent);
  Status answer = fs_->Rename(p, name, np, new_name, flags);
  if (answer.ok() && !(flags & posix::kRenameExchange)) {
    last_.Moved(p, name, np, new_name);
  } else {
    last_.Forget(p, name);
    last_.Forget(np, new_name);
  }
  return answer;
}

Status MountCore::Removing(Ino dir, std::string_view name, Status answer) {
  if (answer.ok()) known_.Removed(dir, name);
  return answer;
}

uint64_t MountCore::OpenNode(NodeId node, bool dir) {
  MutexLock lock(&mu_);
  auto [it, inserted] = open_.try_emplace(InoOf(node).value());
  if (inserted) {
    it->second.dir = dir;
    if (dir) ++open_dirs_;
  }
  ++it->second.handles;
  return next_handle_++;
}

Result<NodeAttr> MountCore::Create(NodeId parent, std::string_view name, uint32_t mode,
                                   Caller caller, uint64_t* handle) {
  ARCHIL_ASSIGN_OR_RETURN(NodeAttr a, Mknod(parent, name, S_IFREG | (mode & 07777), 0, caller));
  *handle = Open(a.node);
  return a;
}

Status MountCore::Release(NodeId node) {
  const Ino ino = InoOf(node);
  bool release = false;
  {
    MutexLock lock(&mu_);
    auto it = open_.find(ino.value());
    if (it == open_.end()) return Status::Ok();
    if (--it->second.handles > 0) return Status::Ok();
    release = it->second.held;
    if (release) --held_;
    if (it->second.dir) --open_dirs_;
    open_.erase(it);
  }
  read_ahead_.Forget(ino);
  if (!release) return Status::Ok();
  return fs_->Release(ino, posix::HolderId(0));
}

Result<std::string> MountCore::Read(NodeId node, uint64_t offset, size_t length) {
  const Ino ino = InoOf(node);
  // A file begun in the order its directory was listed: the files after it are read ahead.
  if (offset == 0 && options_.read_ahead_bytes != 0) {
    for (const ListingOrder::File& f : order_.Began(ino)) read_ahead_.Prefetch(f.ino, f.size);
  }
  return read_ahead_.Read(ino, offset, length);
}

Result<NodeAttr> MountCore::Write(NodeId node, uint64_t offset, std::string_view data, bool sync) {
  ARCHIL_RETURN_IF_ERROR(Writable());
  const Ino ino = InoOf(node);
  return SeenOr(ChangingData(ino, [&] {
    return sync ? fs_->Write(ino, offset, data) : fs_->WriteBehind(ino, offset, data);
  }));
}

Status MountCore::Fallocate(NodeId node, uint32_t mode, uint64_t offset, uint64_t length) {
  ARCHIL_RETURN_IF_ERROR(Writable());
  const Ino ino = InoOf(node);
  return ChangingData(ino, [&] { return fs_->Fallocate(ino, mode, offset, length); });
}

Result<std::vector<DirItem>> MountCore::ReadDir(NodeId dir, uint64_t offset, size_t max, bool* eof,
                                                bool plus) {
  std::vector<DirItem> items;
  *eof = false;
  const Ino ino = InoOf(dir);
  if (max == 0) return items;
  if (offset < kDotOffset) items.push_back({".", ino.value(), S_IFDIR, kDotOffset, std::nullopt});
  if (offset < kDotDotOffset && items.size() < max) {
    // d_ino of "..": the directory's own number (readdir(3) skips entries whose d_ino is 0).
    items.push_back({"..", ino.value(), S_IFDIR, kDotDotOffset, std::nullopt});
  }
  if (items.size() == max) return items;
  // Entry cookies start above 2 (docs/formats.md §4.3), so they serve as the kernel's offsets.
  uint64_t after = offset <= kDotDotOffset ? 0 : offset;
  const size_t left = max - items.size();
  // The kernel reads on until a READDIR returns nothing: past the end the disk gave, no request.
  if (!options_.read_only && ends_.TakeEnd(ino, offset)) {
    ++local_listing_ends_;
    *eof = true;
    return items;
  }
  const uint64_t changes = ends_.Changes();
  if (after == 0 && !options_.read_only) {
    MutexLock lock(&mu_);
    if (last_listing_ && last_listing_->dir == ino.value() && last_listing_->changes == changes &&
        last_listing_->entries.size() <= left) {
      const LastListing& last = *last_listing_;
      size_t begin = 0;
      for (const LastListing::Entry& e : last.entries) {
        items.push_back(
            {last.names.substr(begin, e.name_end - begin), e.ino, e.type, e.offset, std::nullopt});
        begin = e.name_end;
      }
      last_listing_.reset();
      ++local_listings_;
      *eof = true;
      if (!items.empty()) ends_.Ended(ino, items.back().offset, changes);
      return items;
    }
  }
  const uint64_t generation = last_.Generation();
  ARCHIL_ASSIGN_OR_RETURN(posix::DirPage page, plus ? fs_->ReadDirPlus(ino, after, left)
                                                    : fs_->ReadDir(ino, after, left));
  // The order of the listing, for the reading ahead of files read in it (ListingOrder).
  const bool record_order = plus && options_.read_ahead_bytes != 0;
  std::vector<ListingOrder::Entry> order;
  for (posix::DirEntry& e : page.entries) {
    if (e.attr) last_.Saw(ino, e.name, *e.attr, generation);
    if (record_order) {
      using Kind = ListingOrder::Kind;
      const Kind kind = !e.attr                 ? Kind::kOther
                        : S_ISREG(e.attr->mode) ? Kind::kFile
                        : S_ISDIR(e.attr->mode) ? Kind::kDir
                                                : Kind::kOther;
      order.push_back({e.cookie, kind, e.ino, kind == Kind::kFile ? e.attr->size : 0});
    }
    DirItem item{std::move(e.name), e.ino.value(), e.type, e.cookie, std::nullopt};
    if (e.attr) item.attr = Seen(*e.attr);
    items.push_back(std::move(item));
  }
  if (record_order) order_.Listed(ino, after, order, page.eof);
  if (after == 0 && page.eof && !options_.read_only) {
    LastListing last{ino.value(), changes, {}, {}};
    last.entries.reserve(items.size());
    for (const DirItem& item : items) {
      if (item.offset <= kDotDotOffset) continue;
      last.names.append(item.name);
      last.entries.push_back({item.ino, item.offset, item.type, last.names.size()});
    }
    MutexLock lock(&mu_);
    last_listing_ = std::move(last);
  }
  *eof = page.eof;
  if (page.eof && !items.empty() && !options_.read_only) {
    ends_.Ended(ino, items.back().offset, changes);
  }
  return items;
}

Result<std::string> MountCore::GetXattr(NodeId node, std::string_view name) {
  const Ino ino = InoOf(node);
  const bool caps = name == kCapabilityXattr;
  if (caps) {
    MutexLock lock(&mu_);
    if (no_caps_.count(ino.value())) return Status::Errno(ENODATA, "no security.capability");
  }
  Result<std::string> r = fs_->GetXattr(ino, name);
  if (caps && !r.ok() && ErrnoFor(r.status()) == ENODATA) NoCapabilities(ino);
  return r;
}

void MountCore::NoCapabilities(Ino ino) {
  MutexLock lock(&mu_);
  if (no_caps_.size() >= kMaxRememberedDirs) no_caps_.clear();
  no_caps_.insert(ino.value());
}

Status MountCore::SetXattr(NodeId node, std::string_view name, std::string_view value,
                           uint32_t flags) {
  ARCHIL_RETURN_IF_ERROR(Writable());
  const Ino ino = InoOf(node);
  if (name == kCapabilityXattr) {
    MutexLock lock(&mu_);
    no_caps_.erase(ino.value());
  }
  return fs_->SetXattr(ino, name, value, flags);
}

Result<std::vector<std::string>> MountCore::ListXattr(NodeId node) {
  return fs_->ListXattr(InoOf(node));
}

Status MountCore::RemoveXattr(NodeId node, std::string_view name) {
  ARCHIL_RETURN_IF_ERROR(Writable());
  Status s = fs_->RemoveXattr(InoOf(node), name);
  if (s.ok() && name == kCapabilityXattr) NoCapabilities(InoOf(node));
  return s;
}

Result<posix::StatFs> MountCore::Statfs() { return fs_->Statfs(); }

CoreStats MountCore::stats() const {
  CoreStats s;
  {
    MutexLock lock(&mu_);
    for (const auto& [ino, o] : open_) s.open_files += o.handles;
    s.held_orphans = held_;
  }
  s.known_dirs = known_.dirs();
  s.local_negative_lookups = local_negative_lookups_.load(std::memory_order_relaxed);
  s.local_listing_ends = local_listing_ends_.load(std::memory_order_relaxed);
  s.local_listings = local_listings_.load(std::memory_order_relaxed);
  s.read_ahead = read_ahead_.stats();
  return s;
}

}  // namespace archil::fs
