#include "io/sim_env.h"

#include <algorithm>
#include <cstring>
#include <deque>
#include <random>
#include <set>

namespace archil::io {

// A handle on a SimEnv inode, valid for one power generation.
class SimFile final : public File {
 public:
  SimFile(SimEnv* env, uint64_t gen, uint64_t ino, std::string path, bool read_only)
      : env_(env), gen_(gen), ino_(ino), path_(std::move(path)), read_only_(read_only) {}
  ~SimFile() override { (void)Close(); }

  Result<size_t> Pread(uint64_t offset, size_t n, char* buf) override {
    if (closed_) return Status::FromErrno(EBADF, "pread " + path_);
    return env_->FilePread(gen_, ino_, path_, offset, n, buf);
  }
  Status Pwrite(uint64_t offset, std::string_view data) override {
    if (closed_ || read_only_) return Status::FromErrno(EBADF, "pwrite " + path_);
    return env_->FilePwrite(gen_, ino_, path_, offset, data);
  }
  Status Sync() override {
    if (closed_) return Status::FromErrno(EBADF, "fdatasync " + path_);
    return env_->FileSync(gen_, ino_, path_);
  }
  Result<uint64_t> Size() override {
    if (closed_) return Status::FromErrno(EBADF, "fstat " + path_);
    return env_->FileSizeOf(gen_, ino_, path_);
  }
  Status Truncate(uint64_t size) override {
    if (closed_ || read_only_) return Status::FromErrno(EBADF, "ftruncate " + path_);
    return env_->FileTruncate(gen_, ino_, path_, size);
  }
  Status Allocate(uint64_t offset, uint64_t len, bool keep_size) override {
    if (closed_ || read_only_) return Status::FromErrno(EBADF, "fallocate " + path_);
    return env_->FileAllocate(gen_, ino_, path_, offset, len, keep_size, /*punch=*/false);
  }
  Status PunchHole(uint64_t offset, uint64_t len) override {
    if (closed_ || read_only_) return Status::FromErrno(EBADF, "punch hole " + path_);
    return env_->FileAllocate(gen_, ino_, path_, offset, len, true, /*punch=*/true);
  }
  Status Close() override {
    if (closed_) return Status::Ok();
    closed_ = true;
    env_->FileClose(gen_, ino_);
    return Status::Ok();
  }

 private:
  SimEnv* const env_;
  const uint64_t gen_;
  const uint64_t ino_;
  const std::string path_;
  const bool read_only_;
  bool closed_ = false;
};

class SimLock final : public FileLock {
 public:
  SimLock(uint64_t gen, uint64_t ino) : gen(gen), ino(ino) {}
  const uint64_t gen;
  const uint64_t ino;
};

namespace {

constexpr uint64_t kRoot = 1;

Status Errno(int err, std::string_view what, const std::string& path) {
  return Status::FromErrno(err, std::string(what) + " " + path);
}

}  // namespace

SimEnv::SimEnv(const Options& options)
    : clock_(options.clock ? options.clock : &SystemClock::Instance()),
      growth_may_survive_(options.unsynced_growth_may_survive),
      growth_suffix_(options.unsynced_growth_suffix),
      capacity_(options.capacity_bytes) {
  MutexLock l(&mu_);
  Inode& root = inodes_[kRoot];
  root.is_dir = true;
  root.nlink = 1;
  root.durable_nlink = 1;
  root.mtime_micros = clock_->NowMicros();
}

SimEnv::~SimEnv() = default;

int SimEnv::Walk(const std::string& path, Walked* out) const {
  if (path.empty() || path[0] != '/') return EINVAL;
  std::vector<std::string> parts;
  size_t i = 0;
  while (i < path.size()) {
    size_t j = path.find('/', i);
    if (j == std::string::npos) j = path.size();
    std::string part = path.substr(i, j - i);
    if (part == "..") {
      if (!parts.empty()) parts.pop_back();
    } else if (!part.empty() && part != ".") {
      parts.push_back(std::move(part));
    }
    i = j + 1;
  }
  if (parts.empty()) {
    *out = Walked{0, "", kRoot};
    return 0;
  }
  uint64_t dir = kRoot;
  for (size_t k = 0; k + 1 < parts.size(); ++k) {
    const Inode& d = inodes_.at(dir);
    auto it = d.entries.find(parts[k]);
    if (it == d.entries.end()) return ENOENT;
    if (!inodes_.at(it->second).is_dir) return ENOTDIR;
    dir = it->second;
  }
  const Inode& d = inodes_.at(dir);
  auto it = d.entries.find(parts.back());
  *out = Walked{dir, parts.back(), it == d.entries.end() ? 0 : it->second};
  return 0;
}

Status SimEnv::Check(SimOp op, const std::string& path, const std::string& path2) {
  if (powered_off_) return Errno(EIO, "power is off:", path);
  ++op_count_;
  for (RuleState& r : rules_) {
    if ((r.rule.ops & op) == 0) continue;
    if (!r.rule.path_contains.empty() && path.find(r.rule.path_contains) == std::string::npos &&
        path2.find(r.rule.path_contains) == std::string::npos) {
      continue;
    }
    if (r.matched++ < r.rule.skip) continue;
    if (r.rule.times != 0 && r.fired >= r.rule.times) continue;
    ++r.fired;
    ++injected_faults_;
    last_fault_path_ = path;
    if (r.rule.power_off) {
      powered_off_ = true;
      return Errno(EIO, "power cut before operation on", path);
    }
    return Errno(r.rule.error, "injected fault on", path);
  }
  return Status::Ok();
}

uint64_t SimEnv::NewInode(bool is_dir) {
  uint64_t ino = next_ino_++;
  Inode& n = inodes_[ino];
  n.is_dir = is_dir;
  n.mtime_micros = clock_->NowMicros();
  return ino;
}

uint64_t SimEnv::Charge(const Inode& n) {
  if (n.is_dir || (n.nlink == 0 && n.open == 0)) return 0;
  return std::max<uint64_t>(n.data.size(), n.reserved);
}

Status SimEnv::CheckSpace(const Inode& n, uint64_t new_charge, const std::string& path) const {
  if (new_charge > n.charged && new_charge - n.charged > capacity_ - std::min(capacity_, used_)) {
    return Errno(ENOSPC, "write", path);
  }
  return Status::Ok();
}

void SimEnv::Recharge(Inode& n) {
  uint64_t c = Charge(n);
  used_ = used_ - n.charged + c;
  n.charged = c;
}

void SimEnv::Touch(Inode& n) { n.mtime_micros = clock_->NowMicros(); }

void SimEnv::MaybeFree(uint64_t ino) {
  std::vector<uint64_t> todo{ino};
  while (!todo.empty()) {
    uint64_t id = todo.back();
    todo.pop_back();
    auto it = inodes_.find(id);
    if (id == kRoot || it == inodes_.end()) continue;
    Inode& n = it->second;
    if (n.nlink != 0 || n.open != 0 || n.durable_nlink != 0) continue;
    for (const auto& [name, child] : n.durable_entries) {
      inodes_.at(child).durable_nlink--;
      todo.push_back(child);
    }
    used_ -= n.charged;
    locked_.erase(id);
    inodes_.erase(it);
  }
}

Result<uint64_t> SimEnv::OpenInode(const std::string& path, const OpenOptions& options) {
  Walked w;
  if (int err = Walk(path, &w)) return Errno(err, "open", path);
  if (w.ino == 0) {
    if (!options.create) return Errno(ENOENT, "open", path);
    uint64_t ino = NewInode(false);
    Inode& parent = inodes_.at(w.parent);
    parent.entries[w.name] = ino;
    Touch(parent);
    inodes_.at(ino).nlink = 1;
    return ino;
  }
  if (options.create && options.exclusive) return Errno(EEXIST, "open", path);
  if (inodes_.at(w.ino).is_dir) return Errno(EISDIR, "open", path);
  return w.ino;
}

Result<std::unique_ptr<File>> SimEnv::OpenFile(const std::string& path,
                                               const OpenOptions& options) {
  MutexLock l(&mu_);
  ARCHIL_RETURN_IF_ERROR(Check(kSimOpen, path));
  ARCHIL_ASSIGN_OR_RETURN(uint64_t ino, OpenInode(path, options));
  Inode& n = inodes_.at(ino);
  if (options.truncate && !options.read_only && !n.data.empty()) {
    n.data.clear();
    n.reserved = 0;
    Touch(n);
  }
  n.open++;
  Recharge(n);
  return std::unique_ptr<File>(new SimFile(this, generation_, ino, path, options.read_only));
}

Status SimEnv::CreateDir(const std::string& path) {
  MutexLock l(&mu_);
  ARCHIL_RETURN_IF_ERROR(Check(kSimCreateDir, path));
  Walked w;
  if (int err = Walk(path, &w)) return Errno(err, "mkdir", path);
  if (w.ino != 0) return Errno(EEXIST, "mkdir", path);
  uint64_t ino = NewInode(true);
  inodes_.at(ino).nlink = 1;
  Inode& parent = inodes_.at(w.parent);
  parent.entries[w.name] = ino;
  Touch(parent);
  return Status::Ok();
}

Status SimEnv::RemoveDir(const std::string& path) {
  MutexLock l(&mu_);
  ARCHIL_RETURN_IF_ERROR(Check(kSimRemoveDir, path));
  Walked w;
  if (int err = Walk(path, &w)) return Errno(err, "rmdir", path);
  if (w.ino == 0) return Errno(ENOENT, "rmdir", path);
  if (w.ino == kRoot) return Errno(EBUSY, "rmdir", path);
  Inode& n = inodes_.at(w.ino);
  if (!n.is_dir) return Errno(ENOTDIR, "rmdir", path);
  if (!n.entries.empty()) return Errno(ENOTEMPTY, "rmdir", path);
  Inode& parent = inodes_.at(w.parent);
  parent.entries.erase(w.name);
  Touch(parent);
  n.nlink = 0;
  MaybeFree(w.ino);
  return Status::Ok();
}

Status SimEnv::SyncDir(const std::string& path) {
  MutexLock l(&mu_);
  ARCHIL_RETURN_IF_ERROR(Check(kSimSyncDir, path));
  Walked w;
  if (int err = Walk(path, &w)) return Errno(err, "fsync dir", path);
  if (w.ino == 0) return Errno(ENOENT, "fsync dir", path);
  if (!inodes_.at(w.ino).is_dir) return Errno(ENOTDIR, "fsync dir", path);
  // The directory and every directory sharing an un-synced rename with it, transitively.
  std::set<uint64_t> dirs{w.ino};
  std::deque<uint64_t> queue{w.ino};
  while (!queue.empty()) {
    auto it = inodes_.find(queue.front());
    queue.pop_front();
    if (it == inodes_.end()) continue;
    for (uint64_t other : it->second.linked_dirs) {
      if (dirs.insert(other).second) queue.push_back(other);
    }
  }
  std::vector<uint64_t> released;
  for (uint64_t id : dirs) {
    auto it = inodes_.find(id);
    if (it == inodes_.end()) continue;
    Inode& d = it->second;
    for (const auto& [name, child] : d.durable_entries) {
      inodes_.at(child).durable_nlink--;
      released.push_back(child);
    }
    for (const auto& [name, child] : d.entries) inodes_.at(child).durable_nlink++;
    d.durable_entries = d.entries;
    d.linked_dirs.clear();
  }
  for (uint64_t id : released) MaybeFree(id);
  return Status::Ok();
}

Status SimEnv::Rename(const std::string& from, const std::string& to) {
  MutexLock l(&mu_);
  ARCHIL_RETURN_IF_ERROR(Check(kSimRename, from, to));
  Walked src, dst;
  if (int err = Walk(from, &src)) return Errno(err, "rename", from);
  if (int err = Walk(to, &dst)) return Errno(err, "rename to", to);
  if (src.ino == 0) return Errno(ENOENT, "rename", from);
  if (src.ino == kRoot || dst.ino == kRoot) return Errno(EBUSY, "rename", from);
  if (src.ino == dst.ino) return Status::Ok();
  Inode& moving = inodes_.at(src.ino);
  if (moving.is_dir) {
    // `to` may not lie inside `from`.
    for (uint64_t d = dst.parent; d != kRoot;) {
      if (d == src.ino) return Errno(EINVAL, "rename", from);
      uint64_t up = 0;
      for (const auto& [id, n] : inodes_) {
        if (n.is_dir) {
          for (const auto& [name, child] : n.entries) {
            if (child == d) up = id;
          }
        }
      }
      if (up == 0) break;
      d = up;
    }
  }
  if (dst.ino != 0) {
    Inode& old = inodes_.at(dst.ino);
    if (moving.is_dir && !old.is_dir) return Errno(ENOTDIR, "rename to", to);
    if (!moving.is_dir && old.is_dir) return Errno(EISDIR, "rename to", to);
    if (old.is_dir && !old.entries.empty()) return Errno(ENOTEMPTY, "rename to", to);
  }
  Inode& src_dir = inodes_.at(src.parent);
  Inode& dst_dir = inodes_.at(dst.parent);
  src_dir.entries.erase(src.name);
  dst_dir.entries[dst.name] = src.ino;
  Touch(src_dir);
  Touch(dst_dir);
  if (src.parent != dst.parent) {
    src_dir.linked_dirs.insert(dst.parent);
    dst_dir.linked_dirs.insert(src.parent);
  }
  if (dst.ino != 0) {
    Inode& old = inodes_.at(dst.ino);
    old.nlink--;
    Recharge(old);
    MaybeFree(dst.ino);
  }
  return Status::Ok();
}

Status SimEnv::Link(const std::string& from, const std::string& to) {
  MutexLock l(&mu_);
  ARCHIL_RETURN_IF_ERROR(Check(kSimLink, from, to));
  Walked src, dst;
  if (int err = Walk(from, &src)) return Errno(err, "link", from);
  if (int err = Walk(to, &dst)) return Errno(err, "link to", to);
  if (src.ino == 0) return Errno(ENOENT, "link", from);
  if (inodes_.at(src.ino).is_dir) return Errno(EPERM, "link", from);
  if (dst.ino != 0) return Errno(EEXIST, "link to", to);
  Inode& dir = inodes_.at(dst.parent);
  dir.entries[dst.name] = src.ino;
  Touch(dir);
  inodes_.at(src.ino).nlink++;
  return Status::Ok();
}

Status SimEnv::Unlink(const std::string& path) {
  MutexLock l(&mu_);
  ARCHIL_RETURN_IF_ERROR(Check(kSimUnlink, path));
  Walked w;
  if (int err = Walk(path, &w)) return Errno(err, "unlink", path);
  if (w.ino == 0) return Errno(ENOENT, "unlink", path);
  Inode& n = inodes_.at(w.ino);
  if (n.is_dir) return Errno(EISDIR, "unlink", path);
  Inode& dir = inodes_.at(w.parent);
  dir.entries.erase(w.name);
  Touch(dir);
  n.nlink--;
  Recharge(n);
  MaybeFree(w.ino);
  return Status::Ok();
}

Result<std::vector<std::string>> SimEnv::ListDir(const std::string& path) {
  MutexLock l(&mu_);
  ARCHIL_RETURN_IF_ERROR(Check(kSimList, path));
  Walked w;
  if (int err = Walk(path, &w)) return Errno(err, "opendir", path);
  if (w.ino == 0) return Errno(ENOENT, "opendir", path);
  const Inode& d = inodes_.at(w.ino);
  if (!d.is_dir) return Errno(ENOTDIR, "opendir", path);
  std::vector<std::string> names;
  names.reserve(d.entries.size());
  for (const auto& [name, child] : d.entries) names.push_back(name);
  return names;
}

Result<FileInfo> SimEnv::Stat(const std::string& path) {
  MutexLock l(&mu_);
  ARCHIL_RETURN_IF_ERROR(Check(kSimStat, path));
  Walked w;
  if (int err = Walk(path, &w)) return Errno(err, "stat", path);
  if (w.ino == 0) return Errno(ENOENT, "stat", path);
  const Inode& n = inodes_.at(w.ino);
  FileInfo info;
  info.type = n.is_dir ? FileType::kDirectory : FileType::kRegular;
  info.size = n.is_dir ? 4096 : n.data.size();
  info.mtime_micros = n.mtime_micros;
  info.nlink = n.nlink;
  return info;
}

Result<bool> SimEnv::FileExists(const std::string& path) {
  MutexLock l(&mu_);
  ARCHIL_RETURN_IF_ERROR(Check(kSimStat, path));
  Walked w;
  int err = Walk(path, &w);
  if (err == ENOENT || err == ENOTDIR) return false;
  if (err != 0) return Errno(err, "stat", path);
  return w.ino != 0;
}

Result<SpaceInfo> SimEnv::Space(const std::string& path) {
  MutexLock l(&mu_);
  ARCHIL_RETURN_IF_ERROR(Check(kSimStat, path));
  Walked w;
  int err = Walk(path, &w);
  if (err != 0) return Errno(err, "statvfs", path);
  if (w.ino == 0) return Errno(ENOENT, "statvfs", path);
  const uint64_t total = capacity_ == UINT64_MAX ? uint64_t{1} << 50 : capacity_;
  return SpaceInfo{total, total > used_ ? total - used_ : 0};
}

Result<uint64_t> SimEnv::FileSize(const std::string& path) {
  ARCHIL_ASSIGN_OR_RETURN(FileInfo info, Stat(path));
  return info.size;
}

Result<std::unique_ptr<FileLock>> SimEnv::LockFile(const std::string& path) {
  MutexLock l(&mu_);
  ARCHIL_RETURN_IF_ERROR(Check(kSimLock, path));
  OpenOptions create;
  create.create = true;
  ARCHIL_ASSIGN_OR_RETURN(uint64_t ino, OpenInode(path, create));
  if (!locked_.insert(ino).second) return Errno(EWOULDBLOCK, "lock", path);
  return std::unique_ptr<FileLock>(new SimLock(generation_, ino));
}

Status SimEnv::UnlockFile(std::unique_ptr<FileLock> lock) {
  MutexLock l(&mu_);
  auto* sl = static_cast<SimLock*>(lock.get());
  if (sl->gen == generation_) locked_.erase(sl->ino);  // else released by the power loss
  return Status::Ok();
}

void SimEnv::PowerOff() {
  MutexLock l(&mu_);
  powered_off_ = true;
}

bool SimEnv::powered_off() const {
  MutexLock l(&mu_);
  return powered_off_;
}

void SimEnv::Restart(uint64_t seed) {
  MutexLock l(&mu_);
  std::mt19937_64 rng(seed);
  // The files whose un-synced growth may survive, by the names directories give them.
  std::set<uint64_t> may_grow;
  for (auto& [id, n] : inodes_) {
    for (const auto& [name, child] : n.entries) {
      if (name.ends_with(growth_suffix_)) may_grow.insert(child);
    }
  }
  // Contents: durable size; each differing sector within it kept or dropped at random.
  for (auto& [id, n] : inodes_) {
    if (n.is_dir) {
      n.entries = n.durable_entries;
      n.linked_dirs.clear();
      continue;
    }
    std::string result = n.durable;
    if (growth_may_survive_ && may_grow.count(id) && n.data.size() > result.size() && (rng() & 1)) {
      // The size update was committed; sectors past the old size hold new bytes or zeros.
      const uint64_t old_size = result.size();
      result.resize(n.data.size(), '\0');
      uint64_t first = old_size / kSectorSize * kSectorSize;
      for (uint64_t lo = first; lo < result.size(); lo += kSectorSize) {
        uint64_t from = std::max(lo, old_size);
        uint64_t hi = std::min<uint64_t>(lo + kSectorSize, result.size());
        if (rng() & 1) std::memcpy(result.data() + from, n.data.data() + from, hi - from);
      }
    }
    for (uint64_t lo = 0; lo < result.size(); lo += kSectorSize) {
      uint64_t hi = std::min<uint64_t>(lo + kSectorSize, result.size());
      std::string fresh(hi - lo, '\0');
      if (lo < n.data.size()) {
        uint64_t have = std::min<uint64_t>(hi, n.data.size()) - lo;
        std::memcpy(fresh.data(), n.data.data() + lo, have);
      }
      if (std::memcmp(fresh.data(), result.data() + lo, hi - lo) == 0) continue;
      if (rng() & 1) std::memcpy(result.data() + lo, fresh.data(), hi - lo);
    }
    n.data = result;
    n.durable = std::move(result);
    n.reserved = 0;
  }
  // Names: keep what is reachable from the root through durable entries.
  std::set<uint64_t> live{kRoot};
  std::vector<uint64_t> stack{kRoot};
  while (!stack.empty()) {
    uint64_t id = stack.back();
    stack.pop_back();
    for (const auto& [name, child] : inodes_.at(id).entries) {
      if (live.insert(child).second && inodes_.at(child).is_dir) stack.push_back(child);
    }
  }
  std::erase_if(inodes_, [&](const auto& kv) { return live.count(kv.first) == 0; });
  for (auto& [id, n] : inodes_) {
    n.nlink = n.durable_nlink = (id == kRoot) ? 1 : 0;
    n.open = 0;
  }
  for (auto& [id, n] : inodes_) {
    for (const auto& [name, child] : n.entries) {
      Inode& c = inodes_.at(child);
      c.nlink++;
      c.durable_nlink++;
    }
  }
  used_ = 0;
  for (auto& [id, n] : inodes_) {
    n.charged = 0;
    Recharge(n);
  }
  locked_.clear();
  rules_.clear();
  ++generation_;
  powered_off_ = false;
}

void SimEnv::AddFaultRule(FaultRule rule) {
  MutexLock l(&mu_);
  rules_.push_back(RuleState{std::move(rule)});
}

void SimEnv::ClearFaultRules() {
  MutexLock l(&mu_);
  rules_.clear();
}

uint64_t SimEnv::injected_faults() const {
  MutexLock l(&mu_);
  return injected_faults_;
}

std::string SimEnv::last_fault_path() const {
  MutexLock l(&mu_);
  return last_fault_path_;
}

void SimEnv::SetCapacity(uint64_t bytes) {
  MutexLock l(&mu_);
  capacity_ = bytes;
}

uint64_t SimEnv::used_bytes() const {
  MutexLock l(&mu_);
  return used_;
}

uint64_t SimEnv::op_count() const {
  MutexLock l(&mu_);
  return op_count_;
}

// ---- File operations ----

Status SimEnv::CheckHandle(uint64_t gen, const std::string& path) const {
  if (gen != generation_) return Errno(EIO, "handle from before a power loss:", path);
  return Status::Ok();
}

Result<size_t> SimEnv::FilePread(uint64_t gen, uint64_t ino, const std::string& path,
                                 uint64_t offset, size_t n, char* buf) {
  MutexLock l(&mu_);
  ARCHIL_RETURN_IF_ERROR(Check(kSimRead, path));
  ARCHIL_RETURN_IF_ERROR(CheckHandle(gen, path));
  const std::string& data = inodes_.at(ino).data;
  if (offset >= data.size()) return size_t{0};
  size_t got = std::min<uint64_t>(n, data.size() - offset);
  std::copy_n(data.data() + offset, got, buf);
  return got;
}

Status SimEnv::FilePwrite(uint64_t gen, uint64_t ino, const std::string& path, uint64_t offset,
                          std::string_view data) {
  MutexLock l(&mu_);
  ARCHIL_RETURN_IF_ERROR(Check(kSimWrite, path));
  ARCHIL_RETURN_IF_ERROR(CheckHandle(gen, path));
  Inode& n = inodes_.at(ino);
  uint64_t end = offset + data.size();
  ARCHIL_RETURN_IF_ERROR(CheckSpace(n, std::max<uint64_t>({n.data.size(), n.reserved, end}), path));
  if (end > n.data.size()) n.data.resize(end, '\0');
  std::memcpy(n.data.data() + offset, data.data(), data.size());
  Touch(n);
  Recharge(n);
  return Status::Ok();
}

Status SimEnv::FileSync(uint64_t gen, uint64_t ino, const std::string& path) {
  MutexLock l(&mu_);
  ARCHIL_RETURN_IF_ERROR(Check(kSimSync, path));
  ARCHIL_RETURN_IF_ERROR(CheckHandle(gen, path));
  Inode& n = inodes_.at(ino);
  n.durable = n.data;
  return Status::Ok();
}

Result<uint64_t> SimEnv::FileSizeOf(uint64_t gen, uint64_t ino, const std::string& path) {
  MutexLock l(&mu_);
  ARCHIL_RETURN_IF_ERROR(Check(kSimStat, path));
  ARCHIL_RETURN_IF_ERROR(CheckHandle(gen, path));
  return uint64_t{inodes_.at(ino).data.size()};
}

Status SimEnv::FileTruncate(uint64_t gen, uint64_t ino, const std::string& path, uint64_t size) {
  MutexLock l(&mu_);
  ARCHIL_RETURN_IF_ERROR(Check(kSimTruncate, path));
  ARCHIL_RETURN_IF_ERROR(CheckHandle(gen, path));
  Inode& n = inodes_.at(ino);
  // A truncate that does not grow the file frees every block past the new end, preallocated
  // ones included (as ftruncate(2) with a punch of the tail: how RocksDB drops a file's
  // preallocation when it closes it); growing keeps them.
  const uint64_t reserved = size <= n.data.size() ? std::min(n.reserved, size) : n.reserved;
  ARCHIL_RETURN_IF_ERROR(CheckSpace(n, std::max<uint64_t>(size, reserved), path));
  n.reserved = reserved;
  n.data.resize(size, '\0');
  Touch(n);
  Recharge(n);
  return Status::Ok();
}

Status SimEnv::FileAllocate(uint64_t gen, uint64_t ino, const std::string& path, uint64_t offset,
                            uint64_t len, bool keep_size, bool punch) {
  MutexLock l(&mu_);
  ARCHIL_RETURN_IF_ERROR(Check(kSimAllocate, path));
  ARCHIL_RETURN_IF_ERROR(CheckHandle(gen, path));
  Inode& n = inodes_.at(ino);
  uint64_t end = offset + len;
  if (punch) {
    if (offset < n.data.size()) {
      uint64_t stop = std::min<uint64_t>(end, n.data.size());
      std::memset(n.data.data() + offset, 0, stop - offset);
      Touch(n);
    }
    return Status::Ok();
  }
  uint64_t new_size = keep_size ? n.data.size() : std::max<uint64_t>(n.data.size(), end);
  ARCHIL_RETURN_IF_ERROR(CheckSpace(n, std::max<uint64_t>({new_size, n.reserved, end}), path));
  n.reserved = std::max(n.reserved, end);
  if (new_size > n.data.size()) {
    n.data.resize(new_size, '\0');
    Touch(n);
  }
  Recharge(n);
  return Status::Ok();
}

void SimEnv::FileClose(uint64_t gen, uint64_t ino) {
  MutexLock l(&mu_);
  if (gen != generation_) return;  // the power loss already dropped every handle
  Inode& n = inodes_.at(ino);
  n.open--;
  Recharge(n);
  MaybeFree(ino);
}

}  // namespace archil::io
