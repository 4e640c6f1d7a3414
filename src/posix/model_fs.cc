#include "posix/model_fs.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>

namespace archil::posix {

struct ModelFs::Node {
  Attr attr;
  std::map<uint64_t, std::string> blocks;  // regular files: kBlockSize bytes each; absent = zeros
  std::string target;                      // symlinks
  // Directories: entries by name, and the same entries by cookie (the order ReadDir returns).
  std::map<std::string, Ino, std::less<>> entries;
  std::map<std::string, uint64_t, std::less<>> cookie_of;
  std::map<uint64_t, std::string> by_cookie;
  uint64_t next_cookie = 3;  // 1 and 2 are the positions after "." and ".."
  Ino parent;                // directories
  std::map<std::string, std::string, std::less<>> xattrs;
  std::map<uint64_t, int> holders;  // holder id -> open references

  bool is_dir() const { return S_ISDIR(attr.mode); }
  bool is_reg() const { return S_ISREG(attr.mode); }
};

struct ModelFs::State {
  std::map<Ino, Node> nodes;
  uint64_t next_ino = 16;
};

namespace {

Status NoEntry(std::string_view name) {
  return Status::Errno(ENOENT, "no entry '" + std::string(name) + "'");
}

}  // namespace

// The helpers below run with mu_ held; they live in a class so they can see Node and State.
class ModelOps {
 public:
  using Node = ModelFs::Node;
  ModelOps(ModelFs::State* s, Timespec now) : s_(s), now_(now) {}

  Result<Node*> Get(Ino ino) {
    auto it = s_->nodes.find(ino);
    if (it == s_->nodes.end()) {
      return Status::Errno(ENOENT, "no inode " + std::to_string(ino.value()));
    }
    return &it->second;
  }
  Result<Node*> Dir(Ino ino) {
    ARCHIL_ASSIGN_OR_RETURN(Node * n, Get(ino));
    if (!n->is_dir()) return Status::Errno(ENOTDIR, "inode is not a directory");
    return n;
  }
  // The entry `name` of directory `dir`, or nullptr.
  Node* Child(Node* dir, std::string_view name) {
    auto it = dir->entries.find(name);
    return it == dir->entries.end() ? nullptr : &s_->nodes.at(it->second);
  }
  Ino NewNode(uint32_t mode, Owner owner) {
    Ino ino(s_->next_ino++);
    Node& n = s_->nodes[ino];
    n.attr.ino = ino;
    n.attr.mode = mode;
    n.attr.uid = owner.uid;
    n.attr.gid = owner.gid;
    n.attr.nlink = 1;
    n.attr.atime = n.attr.mtime = n.attr.ctime = n.attr.btime = now_;
    return ino;
  }
  void AddEntry(Node* dir, std::string_view name, Ino ino) {
    std::string key(name);
    uint64_t cookie = dir->next_cookie++;
    dir->entries[key] = ino;
    dir->cookie_of[key] = cookie;
    dir->by_cookie[cookie] = key;
    Changed(dir);
  }
  void RemoveEntry(Node* dir, std::string_view name) {
    auto c = dir->cookie_of.find(name);
    dir->by_cookie.erase(c->second);
    dir->cookie_of.erase(c);
    dir->entries.erase(dir->entries.find(name));
    Changed(dir);
  }
  void Changed(Node* n) { n->attr.mtime = n->attr.ctime = now_; }
  // Frees an inode with no name and no holder.
  void MaybeFree(Node* n) {
    if (n->attr.nlink == 0 && n->holders.empty()) s_->nodes.erase(n->attr.ino);
  }
  // True if `ino` is `ancestor` or lies below it.
  bool IsWithin(Ino ino, Ino ancestor) {
    for (;;) {
      if (ino == ancestor) return true;
      if (ino == kRootIno) return false;
      ino = s_->nodes.at(ino).parent;
    }
  }

  static void CountBlocks(Node* n) { n->attr.blocks = n->blocks.size() * (kBlockSize / 512); }
  // Zeros [offset, offset + length) of a regular file's data, dropping whole blocks.
  static void ZeroRange(Node* n, uint64_t offset, uint64_t length) {
    uint64_t end = offset + length;
    for (auto it = n->blocks.lower_bound(offset / kBlockSize); it != n->blocks.end();) {
      uint64_t start = it->first * kBlockSize;
      if (start >= end) break;
      uint64_t from = std::max(offset, start) - start;
      uint64_t to = std::min(end, start + kBlockSize) - start;
      if (from == 0 && to == kBlockSize) {
        it = n->blocks.erase(it);
        continue;
      }
      std::fill(it->second.begin() + static_cast<ptrdiff_t>(from),
                it->second.begin() + static_cast<ptrdiff_t>(to), '\0');
      ++it;
    }
    CountBlocks(n);
  }
  static void Resize(Node* n, uint64_t size) {
    if (size < n->attr.size) ZeroRange(n, size, n->attr.size - size);
    n->attr.size = size;
  }

  Timespec now() const { return now_; }

 private:
  ModelFs::State* s_;
  Timespec now_;
};

ModelFs::ModelFs(const Clock* clock, uint32_t root_mode, Owner root_owner)
    : state_(std::make_unique<State>()), clock_(clock) {
  Node& root = state_->nodes[kRootIno];
  root.attr.ino = kRootIno;
  root.attr.mode = S_IFDIR | (root_mode & 07777);
  root.attr.nlink = 2;
  root.attr.uid = root_owner.uid;
  root.attr.gid = root_owner.gid;
  root.attr.atime = root.attr.mtime = root.attr.ctime = root.attr.btime =
      Timespec::FromMicros(clock->NowMicros());
  root.parent = kRootIno;
}

ModelFs::ModelFs(const ModelFs& other) : clock_(other.clock_) {
  MutexLock lock(&other.mu_);
  state_ = std::make_unique<State>(*other.state_);
}

ModelFs::~ModelFs() = default;

#define MODEL_OPS       \
  MutexLock lock(&mu_); \
  ModelOps ops(state_.get(), Timespec::FromMicros(clock_->NowMicros()))

Result<Attr> ModelFs::Lookup(Ino parent, std::string_view name) {
  MODEL_OPS;
  ARCHIL_RETURN_IF_ERROR(ValidateName(name));
  ARCHIL_ASSIGN_OR_RETURN(Node * dir, ops.Dir(parent));
  Node* child = ops.Child(dir, name);
  if (!child) return NoEntry(name);
  return child->attr;
}

Result<Attr> ModelFs::GetAttr(Ino ino) {
  MODEL_OPS;
  ARCHIL_ASSIGN_OR_RETURN(Node * n, ops.Get(ino));
  return n->attr;
}

Result<Attr> ModelFs::SetAttr(Ino ino, const SetAttrRequest& r) {
  MODEL_OPS;
  ARCHIL_ASSIGN_OR_RETURN(Node * n, ops.Get(ino));
  if (r.mode && *r.mode > 07777) return Status::Errno(EINVAL, "mode beyond 07777");
  if (r.size) {
    if (n->is_dir()) return Status::Errno(EISDIR, "truncate of a directory");
    if (!n->is_reg()) return Status::Errno(EINVAL, "truncate of a special file");
    if (*r.size > kMaxFileSize) return Status::Errno(EFBIG, "size beyond the maximum");
  }
  if (r.mode) n->attr.mode = (n->attr.mode & S_IFMT) | *r.mode;
  if (r.uid) n->attr.uid = *r.uid;
  if (r.gid) n->attr.gid = *r.gid;
  if (r.size && *r.size != n->attr.size) {
    ModelOps::Resize(n, *r.size);
    n->attr.mtime = ops.now();
  }
  auto apply = [&](const TimeUpdate& u, Timespec* t) {
    if (u.kind == TimeUpdate::Kind::kNow) *t = ops.now();
    if (u.kind == TimeUpdate::Kind::kValue) *t = u.value;
  };
  apply(r.atime, &n->attr.atime);
  apply(r.mtime, &n->attr.mtime);
  n->attr.ctime = ops.now();
  return n->attr;
}

Result<Attr> ModelFs::Mknod(Ino parent, std::string_view name, uint32_t mode, uint32_t rdev,
                            Owner owner) {
  MODEL_OPS;
  ARCHIL_RETURN_IF_ERROR(ValidateName(name));
  uint32_t type = mode & S_IFMT;
  if (type != S_IFREG && type != S_IFIFO && type != S_IFSOCK && type != S_IFCHR &&
      type != S_IFBLK) {
    return Status::Errno(EINVAL, "mknod of an unsupported file type");
  }
  ARCHIL_ASSIGN_OR_RETURN(Node * dir, ops.Dir(parent));
  if (ops.Child(dir, name)) return Status::Errno(EEXIST, "'" + std::string(name) + "' exists");
  Ino ino = ops.NewNode(type | (mode & 07777), owner);
  Node& n = state_->nodes.at(ino);
  if (type == S_IFCHR || type == S_IFBLK) n.attr.rdev = rdev;
  ops.AddEntry(dir, name, ino);
  return n.attr;
}

Result<Attr> ModelFs::Mkdir(Ino parent, std::string_view name, uint32_t mode, Owner owner) {
  MODEL_OPS;
  ARCHIL_RETURN_IF_ERROR(ValidateName(name));
  ARCHIL_ASSIGN_OR_RETURN(Node * dir, ops.Dir(parent));
  if (ops.Child(dir, name)) return Status::Errno(EEXIST, "'" + std::string(name) + "' exists");
  Ino ino = ops.NewNode(S_IFDIR | (mode & 07777), owner);
  Node& n = state_->nodes.at(ino);
  n.attr.nlink = 2;
  n.parent = parent;
  ops.AddEntry(dir, name, ino);
  dir->attr.nlink++;
  return n.attr;
}

Result<Attr> ModelFs::Symlink(Ino parent, std::string_view name, std::string_view target,
                              Owner owner) {
  MODEL_OPS;
  ARCHIL_RETURN_IF_ERROR(ValidateName(name));
  if (target.empty()) return Status::Errno(ENOENT, "empty symlink target");
  if (target.size() > kSymlinkMax) return Status::Errno(ENAMETOOLONG, "symlink target too long");
  ARCHIL_ASSIGN_OR_RETURN(Node * dir, ops.Dir(parent));
  if (ops.Child(dir, name)) return Status::Errno(EEXIST, "'" + std::string(name) + "' exists");
  Ino ino = ops.NewNode(S_IFLNK | 0777, owner);
  Node& n = state_->nodes.at(ino);
  n.target = std::string(target);
  n.attr.size = target.size();
  ops.AddEntry(dir, name, ino);
  return n.attr;
}

Result<Attr> ModelFs::Link(Ino ino, Ino new_parent, std::string_view new_name) {
  MODEL_OPS;
  ARCHIL_RETURN_IF_ERROR(ValidateName(new_name));
  ARCHIL_ASSIGN_OR_RETURN(Node * n, ops.Get(ino));
  ARCHIL_ASSIGN_OR_RETURN(Node * dir, ops.Dir(new_parent));
  if (n->is_dir()) return Status::Errno(EPERM, "hard link to a directory");
  if (n->attr.nlink == 0) return Status::Errno(ENOENT, "link to an unlinked inode");
  if (ops.Child(dir, new_name)) {
    return Status::Errno(EEXIST, "'" + std::string(new_name) + "' exists");
  }
  ops.AddEntry(dir, new_name, ino);
  n->attr.nlink++;
  n->attr.ctime = ops.now();
  return n->attr;
}

Status ModelFs::Unlink(Ino parent, std::string_view name) {
  MODEL_OPS;
  ARCHIL_RETURN_IF_ERROR(ValidateName(name));
  ARCHIL_ASSIGN_OR_RETURN(Node * dir, ops.Dir(parent));
  Node* child = ops.Child(dir, name);
  if (!child) return NoEntry(name);
  if (child->is_dir()) return Status::Errno(EISDIR, "unlink of a directory");
  ops.RemoveEntry(dir, name);
  child->attr.nlink--;
  child->attr.ctime = ops.now();
  ops.MaybeFree(child);
  return Status::Ok();
}

Status ModelFs::Rmdir(Ino parent, std::string_view name) {
  MODEL_OPS;
  ARCHIL_RETURN_IF_ERROR(ValidateName(name));
  ARCHIL_ASSIGN_OR_RETURN(Node * dir, ops.Dir(parent));
  Node* child = ops.Child(dir, name);
  if (!child) return NoEntry(name);
  if (!child->is_dir()) return Status::Errno(ENOTDIR, "rmdir of a non-directory");
  if (!child->entries.empty()) return Status::Errno(ENOTEMPTY, "directory not empty");
  ops.RemoveEntry(dir, name);
  dir->attr.nlink--;
  child->attr.nlink = 0;
  child->attr.ctime = ops.now();
  ops.MaybeFree(child);
  return Status::Ok();
}

Status ModelFs::Rename(Ino parent, std::string_view name, Ino new_parent, std::string_view new_name,
                       uint32_t flags) {
  MODEL_OPS;
  if ((flags & ~(kRenameNoReplace | kRenameExchange)) != 0 ||
      flags == (kRenameNoReplace | kRenameExchange)) {
    return Status::Errno(EINVAL, "invalid rename flags");
  }
  ARCHIL_RETURN_IF_ERROR(ValidateName(name));
  ARCHIL_RETURN_IF_ERROR(ValidateName(new_name));
  ARCHIL_ASSIGN_OR_RETURN(Node * from, ops.Dir(parent));
  ARCHIL_ASSIGN_OR_RETURN(Node * to, ops.Dir(new_parent));
  Node* src = ops.Child(from, name);
  if (!src) return NoEntry(name);
  Node* dst = ops.Child(to, new_name);
  const Ino src_ino = src->attr.ino;

  if (flags & kRenameExchange) {
    if (!dst) return NoEntry(new_name);
    if (dst == src) return Status::Ok();
    if (src->is_dir() && ops.IsWithin(new_parent, src_ino)) {
      return Status::Errno(EINVAL, "directory moved into its own subtree");
    }
    if (dst->is_dir() && ops.IsWithin(parent, dst->attr.ino)) {
      return Status::Errno(EINVAL, "directory moved into its own subtree");
    }
    const Ino dst_ino = dst->attr.ino;
    ops.RemoveEntry(from, name);
    ops.RemoveEntry(to, new_name);
    ops.AddEntry(to, new_name, src_ino);
    ops.AddEntry(from, name, dst_ino);
    if (src->is_dir() != dst->is_dir() && parent != new_parent) {
      Node* gains = src->is_dir() ? to : from;  // the parent that now holds the directory
      Node* loses = src->is_dir() ? from : to;
      gains->attr.nlink++;
      loses->attr.nlink--;
    }
    if (src->is_dir()) src->parent = new_parent;
    if (dst->is_dir()) dst->parent = parent;
    src->attr.ctime = dst->attr.ctime = ops.now();
    return Status::Ok();
  }

  if (dst && (flags & kRenameNoReplace)) {
    return Status::Errno(EEXIST, "'" + std::string(new_name) + "' exists");
  }
  if (dst == src) return Status::Ok();  // two names of one inode, or the same name: nothing to do
  if (dst) {
    if (src->is_dir() && !dst->is_dir()) return Status::Errno(ENOTDIR, "target not a directory");
    if (!src->is_dir() && dst->is_dir()) return Status::Errno(EISDIR, "target is a directory");
    if (dst->is_dir() && !dst->entries.empty()) {
      return Status::Errno(ENOTEMPTY, "target directory not empty");
    }
  }
  if (src->is_dir() && ops.IsWithin(new_parent, src_ino)) {
    return Status::Errno(EINVAL, "directory moved into its own subtree");
  }
  ops.RemoveEntry(from, name);
  if (dst) {
    ops.RemoveEntry(to, new_name);
    if (dst->is_dir()) {
      dst->attr.nlink = 0;
      to->attr.nlink--;
    } else {
      dst->attr.nlink--;
    }
    dst->attr.ctime = ops.now();
    ops.MaybeFree(dst);
  }
  ops.AddEntry(to, new_name, src_ino);
  if (src->is_dir() && parent != new_parent) {
    from->attr.nlink--;
    to->attr.nlink++;
    src->parent = new_parent;
  }
  src->attr.ctime = ops.now();
  return Status::Ok();
}

Result<std::string> ModelFs::Readlink(Ino ino) {
  MODEL_OPS;
  ARCHIL_ASSIGN_OR_RETURN(Node * n, ops.Get(ino));
  if (!S_ISLNK(n->attr.mode)) return Status::Errno(EINVAL, "not a symlink");
  return n->target;
}

Result<DirPage> ModelFs::ReadDir(Ino dir_ino, uint64_t after_cookie, size_t max_entries) {
  MODEL_OPS;
  ARCHIL_ASSIGN_OR_RETURN(Node * dir, ops.Dir(dir_ino));
  DirPage page;
  auto it = dir->by_cookie.upper_bound(after_cookie);
  for (; it != dir->by_cookie.end() && page.entries.size() < max_entries; ++it) {
    const Node& child = state_->nodes.at(dir->entries.at(it->second));
    page.entries.push_back(
        {it->second, child.attr.ino, child.attr.mode & S_IFMT, it->first, std::nullopt});
  }
  page.eof = it == dir->by_cookie.end();
  return page;
}

Result<std::string> ModelFs::GetXattr(Ino ino, std::string_view name) {
  MODEL_OPS;
  ARCHIL_RETURN_IF_ERROR(ValidateXattrName(name));
  ARCHIL_ASSIGN_OR_RETURN(Node * n, ops.Get(ino));
  auto it = n->xattrs.find(name);
  if (it == n->xattrs.end()) return Status::Errno(ENODATA, "no xattr " + std::string(name));
  return it->second;
}

Status ModelFs::SetXattr(Ino ino, std::string_view name, std::string_view value, uint32_t flags) {
  MODEL_OPS;
  ARCHIL_RETURN_IF_ERROR(ValidateXattrName(name));
  if (value.size() > kXattrValueMax) return Status::Errno(E2BIG, "xattr value over 64 KiB");
  if ((flags & ~(kXattrCreate | kXattrReplace)) != 0 || flags == (kXattrCreate | kXattrReplace)) {
    return Status::Errno(EINVAL, "invalid xattr flags");
  }
  ARCHIL_ASSIGN_OR_RETURN(Node * n, ops.Get(ino));
  auto old = n->xattrs.find(name);
  bool exists = old != n->xattrs.end();
  if ((flags & kXattrCreate) && exists) return Status::Errno(EEXIST, "xattr exists");
  if ((flags & kXattrReplace) && !exists) return Status::Errno(ENODATA, "no such xattr");
  XattrTotals totals;
  for (const auto& [k, v] : n->xattrs) totals.Add(k, v.size());
  ARCHIL_RETURN_IF_ERROR(CheckXattrSpace(
      totals, name, exists ? std::optional<size_t>(old->second.size()) : std::nullopt,
      value.size()));
  n->xattrs[std::string(name)] = std::string(value);
  n->attr.ctime = ops.now();
  return Status::Ok();
}

Result<std::vector<std::string>> ModelFs::ListXattr(Ino ino) {
  MODEL_OPS;
  ARCHIL_ASSIGN_OR_RETURN(Node * n, ops.Get(ino));
  std::vector<std::string> names;
  for (const auto& [name, value] : n->xattrs) names.push_back(name);
  return names;
}

Status ModelFs::RemoveXattr(Ino ino, std::string_view name) {
  MODEL_OPS;
  ARCHIL_RETURN_IF_ERROR(ValidateXattrName(name));
  ARCHIL_ASSIGN_OR_RETURN(Node * n, ops.Get(ino));
  auto it = n->xattrs.find(name);
  if (it == n->xattrs.end()) return Status::Errno(ENODATA, "no xattr " + std::string(name));
  n->xattrs.erase(it);
  n->attr.ctime = ops.now();
  return Status::Ok();
}

Result<std::string> ModelFs::Read(Ino ino, uint64_t offset, size_t length) {
  MODEL_OPS;
  ARCHIL_ASSIGN_OR_RETURN(Node * n, ops.Get(ino));
  if (n->is_dir()) return Status::Errno(EISDIR, "read of a directory");
  if (!n->is_reg()) return Status::Errno(EINVAL, "read of a special file");
  if (offset >= n->attr.size) return std::string();
  uint64_t end = std::min<uint64_t>(n->attr.size, offset + length);
  std::string out(end - offset, '\0');
  for (auto it = n->blocks.lower_bound(offset / kBlockSize); it != n->blocks.end(); ++it) {
    uint64_t start = it->first * kBlockSize;
    if (start >= end) break;
    uint64_t from = std::max(offset, start);
    uint64_t to = std::min(end, start + kBlockSize);
    std::copy(it->second.begin() + static_cast<ptrdiff_t>(from - start),
              it->second.begin() + static_cast<ptrdiff_t>(to - start),
              out.begin() + static_cast<ptrdiff_t>(from - offset));
  }
  return out;
}

Result<Attr> ModelFs::Write(Ino ino, uint64_t offset, std::string_view data) {
  MODEL_OPS;
  ARCHIL_ASSIGN_OR_RETURN(Node * n, ops.Get(ino));
  if (n->is_dir()) return Status::Errno(EISDIR, "write to a directory");
  if (!n->is_reg()) return Status::Errno(EINVAL, "write to a special file");
  if (offset > kMaxFileSize || data.size() > kMaxFileSize - offset) {
    return Status::Errno(EFBIG, "write beyond the maximum file size");
  }
  uint64_t end = offset + data.size();
  for (uint64_t pos = offset; pos < end;) {
    uint64_t index = pos / kBlockSize;
    uint64_t within = pos % kBlockSize;
    uint64_t n_bytes = std::min<uint64_t>(kBlockSize - within, end - pos);
    std::string& block = n->blocks[index];
    if (block.empty()) block.assign(kBlockSize, '\0');
    std::copy(data.begin() + static_cast<ptrdiff_t>(pos - offset),
              data.begin() + static_cast<ptrdiff_t>(pos - offset + n_bytes),
              block.begin() + static_cast<ptrdiff_t>(within));
    pos += n_bytes;
  }
  ModelOps::CountBlocks(n);
  n->attr.size = std::max(n->attr.size, end);
  // A write drops set-user-ID, and set-group-ID when group-execute is set (docs/semantics.md).
  n->attr.mode &= ~static_cast<uint32_t>(S_ISUID);
  if (n->attr.mode & S_IXGRP) n->attr.mode &= ~static_cast<uint32_t>(S_ISGID);
  ops.Changed(n);
  return n->attr;
}

// Checks in the order Linux's vfs_fallocate makes them: the range, the mode, the file type,
// the size limit.
Status ModelFs::Fallocate(Ino ino, uint32_t mode, uint64_t offset, uint64_t length) {
  MODEL_OPS;
  const bool keep = mode & kFallocKeepSize;
  const uint32_t op = mode & ~kFallocKeepSize;
  if (length == 0) return Status::Errno(EINVAL, "fallocate of length 0");
  if (op != 0 && op != kFallocPunchHole && op != kFallocZeroRange) {
    return Status::Errno(EOPNOTSUPP, "unsupported fallocate mode");
  }
  if (op == kFallocPunchHole && !keep) {
    return Status::Errno(EOPNOTSUPP, "punch hole needs keep-size");
  }
  ARCHIL_ASSIGN_OR_RETURN(Node * n, ops.Get(ino));
  if (S_ISFIFO(n->attr.mode)) return Status::Errno(ESPIPE, "fallocate of a FIFO");
  if (n->is_dir()) return Status::Errno(EISDIR, "fallocate of a directory");
  if (!n->is_reg()) return Status::Errno(ENODEV, "fallocate of a special file");
  if (offset > kMaxFileSize || length > kMaxFileSize - offset) {
    return Status::Errno(EFBIG, "fallocate beyond the maximum file size");
  }
  uint64_t end = offset + length;
  if (op == kFallocPunchHole) {
    if (offset < n->attr.size) ModelOps::ZeroRange(n, offset, std::min(end, n->attr.size) - offset);
    ops.Changed(n);
    return Status::Ok();
  }
  if (op == kFallocZeroRange) {
    if (offset < n->attr.size) ModelOps::ZeroRange(n, offset, std::min(end, n->attr.size) - offset);
    if (!keep && end > n->attr.size) n->attr.size = end;
    ops.Changed(n);
    return Status::Ok();
  }
  if (!keep && end > n->attr.size) {
    n->attr.size = end;
    n->attr.mtime = ops.now();
  }
  n->attr.ctime = ops.now();
  return Status::Ok();
}

Result<StatFs> ModelFs::Statfs() {
  MODEL_OPS;
  StatFs s;
  uint64_t used = 0;
  for (const auto& [ino, node] : state_->nodes) used += node.blocks.size();
  s.blocks = uint64_t{1} << 30;
  s.blocks_free = s.blocks - used;
  s.files = uint64_t{1} << 32;
  s.files_free = s.files - state_->nodes.size();
  return s;
}

Status ModelFs::Open(Ino ino, HolderId holder) {
  MODEL_OPS;
  ARCHIL_ASSIGN_OR_RETURN(Node * n, ops.Get(ino));
  n->holders[holder.value()]++;
  return Status::Ok();
}

Status ModelFs::Release(Ino ino, HolderId holder) {
  MODEL_OPS;
  ARCHIL_ASSIGN_OR_RETURN(Node * n, ops.Get(ino));
  auto it = n->holders.find(holder.value());
  if (it == n->holders.end()) return Status::Errno(EINVAL, "inode not open by this holder");
  if (--it->second == 0) n->holders.erase(it);
  ops.MaybeFree(n);
  return Status::Ok();
}

Status ModelFs::DropHolder(HolderId holder) {
  MODEL_OPS;
  std::vector<Ino> held;
  for (auto& [ino, node] : state_->nodes) {
    if (node.holders.erase(holder.value())) held.push_back(ino);
  }
  for (Ino ino : held) ops.MaybeFree(&state_->nodes.at(ino));
  return Status::Ok();
}

size_t ModelFs::InodeCount() {
  MutexLock lock(&mu_);
  return state_->nodes.size();
}

}  // namespace archil::posix
