#define FUSE_USE_VERSION 314
#include "fuse/fuse_adapter.h"

#include <fcntl.h>
#include <fuse_lowlevel.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <vector>

#include "base/cancel.h"
#include "fuse/killed_caller.h"

namespace archil::fuse {
namespace {

using fs::Caller;
using fs::NodeAttr;
using fs::NodeId;

constexpr uint32_t kMaxIo = 1 << 20;  // max_write and max_read: 1 MiB

Adapter* Of(fuse_req_t req) { return static_cast<Adapter*>(fuse_req_userdata(req)); }

// One request while it runs: counted for `archil status`, and given up (EINTR) by the calls it
// makes if its caller is killed while they wait for a server (fuse/killed_caller.h). WRITEs are
// never given up: the kernel sends page-cache writeback under whichever process happens to
// flush, and a failed one would lose data that other processes see in the cache.
class InFlight {
 public:
  enum class Cancel { kIfCallerKilled, kNever };
  explicit InFlight(fuse_req_t req, Cancel cancel = Cancel::kIfCallerKilled)
      : stats_(Of(req)->stats()),
        caller_(cancel == Cancel::kNever ? 0 : fuse_req_ctx(req)->pid),
        cancel_(&caller_) {
    stats_.requests.fetch_add(1, std::memory_order_relaxed);
    stats_.in_flight.fetch_add(1, std::memory_order_relaxed);
  }
  ~InFlight() { stats_.in_flight.fetch_sub(1, std::memory_order_relaxed); }
  InFlight(const InFlight&) = delete;
  InFlight& operator=(const InFlight&) = delete;

 private:
  AdapterStats& stats_;
  const KilledCaller caller_;
  const CancelScope cancel_;
};

int ErrnoOf(fuse_req_t req, const Status& s) {
  int e = ErrnoFor(s);
  if (e == 0) e = EIO;
  if (e == EIO) Of(req)->stats().errors.fetch_add(1, std::memory_order_relaxed);
  return e;
}

void ReplyStatus(fuse_req_t req, const Status& s) {
  fuse_reply_err(req, s.ok() ? 0 : ErrnoOf(req, s));
}

struct stat StatOf(const NodeAttr& n) {
  struct stat st {};
  const posix::Attr& a = n.attr;
  st.st_ino = a.ino.value();
  st.st_mode = a.mode;
  st.st_nlink = a.nlink;
  st.st_uid = a.uid;
  st.st_gid = a.gid;
  st.st_rdev = a.rdev;
  st.st_size = static_cast<off_t>(a.size);
  st.st_blocks = static_cast<blkcnt_t>(a.blocks);
  st.st_blksize = posix::kBlockSize;
  st.st_atim = {a.atime.sec, a.atime.nsec};
  st.st_mtim = {a.mtime.sec, a.mtime.nsec};
  st.st_ctim = {a.ctime.sec, a.ctime.nsec};
  return st;
}

fuse_entry_param EntryOf(fuse_req_t req, const NodeAttr& n) {
  fuse_entry_param e{};
  e.ino = n.node;
  e.generation = 0;  // inode numbers are never reused
  e.attr = StatOf(n);
  e.attr.st_ino = n.attr.ino.value();
  e.attr_timeout = Of(req)->options().timeout_s;
  e.entry_timeout = Of(req)->options().timeout_s;
  return e;
}

void ReplyEntry(fuse_req_t req, const Result<NodeAttr>& r) {
  if (!r.ok()) return ReplyStatus(req, r.status());
  fuse_entry_param e = EntryOf(req, r.value());
  fuse_reply_entry(req, &e);
}

Caller CallerOf(fuse_req_t req) {
  const fuse_ctx* ctx = fuse_req_ctx(req);
  return Caller{ctx->uid, ctx->gid};
}

fs::MountCore& Core(fuse_req_t req) { return *Of(req)->core(); }

// ---- handlers, in fuse_lowlevel_ops order

void Init(void* userdata, fuse_conn_info* conn) {
  auto* self = static_cast<Adapter*>(userdata);
  const AdapterOptions& o = self->options();
  conn->max_write = kMaxIo;
  conn->max_read = kMaxIo;  // must equal the max_read= mount option
  conn->max_readahead = std::min<uint32_t>(conn->max_readahead, o.read_ahead_kb * 1024);
  conn->max_background = 128;
  conn->congestion_threshold = 96;
  conn->time_gran = 1;
  // The kernel clears set-ID bits itself (a SETATTR), and sends a SETATTR for O_TRUNC, as a
  // local file system would see it; data is invalidated only by us (there are no other writers).
  conn->want &= ~(FUSE_CAP_HANDLE_KILLPRIV | FUSE_CAP_ATOMIC_O_TRUNC | FUSE_CAP_AUTO_INVAL_DATA |
                  FUSE_CAP_READDIRPLUS_AUTO);
  auto want = [conn](unsigned cap) {
    if (conn->capable & cap) conn->want |= cap;
  };
  want(FUSE_CAP_ASYNC_READ);
  want(FUSE_CAP_ASYNC_DIO);
  want(FUSE_CAP_PARALLEL_DIROPS);
  want(FUSE_CAP_READDIRPLUS);
  want(FUSE_CAP_CACHE_SYMLINKS);
  want(FUSE_CAP_EXPLICIT_INVAL_DATA);
  if (o.writeback_cache && !self->core()->read_only()) want(FUSE_CAP_WRITEBACK_CACHE);
  self->MarkReady();
}

void Lookup(fuse_req_t req, fuse_ino_t parent, const char* name) {
  InFlight f(req);
  Result<NodeAttr> r = Core(req).Lookup(parent, name);
  if (!r.ok() && ErrnoFor(r.status()) == ENOENT) {
    // A negative entry the kernel may keep: nothing else creates names on this disk.
    fuse_entry_param e{};
    e.ino = 0;
    e.entry_timeout = Of(req)->options().timeout_s;
    fuse_reply_entry(req, &e);
    return;
  }
  ReplyEntry(req, r);
}

void Forget(fuse_req_t req, fuse_ino_t, uint64_t) { fuse_reply_none(req); }

void ForgetMulti(fuse_req_t req, size_t, fuse_forget_data*) { fuse_reply_none(req); }

void GetAttr(fuse_req_t req, fuse_ino_t ino, fuse_file_info*) {
  InFlight f(req);
  Result<NodeAttr> r = Core(req).GetAttr(ino);
  if (!r.ok()) return ReplyStatus(req, r.status());
  struct stat st = StatOf(r.value());
  fuse_reply_attr(req, &st, Of(req)->options().timeout_s);
}

posix::TimeUpdate TimeOf(int to_set, int now_bit, int set_bit, const timespec& t) {
  if (to_set & now_bit) return posix::TimeUpdate::Now();
  if (to_set & set_bit) {
    return posix::TimeUpdate::At(
        posix::Timespec{static_cast<int64_t>(t.tv_sec), static_cast<uint32_t>(t.tv_nsec)});
  }
  return {};
}

void SetAttr(fuse_req_t req, fuse_ino_t ino, struct stat* attr, int to_set, fuse_file_info*) {
  InFlight f(req);
  posix::SetAttrRequest s;
  if (to_set & FUSE_SET_ATTR_MODE) s.mode = attr->st_mode & 07777;
  if (to_set & FUSE_SET_ATTR_UID) s.uid = attr->st_uid;
  if (to_set & FUSE_SET_ATTR_GID) s.gid = attr->st_gid;
  if (to_set & FUSE_SET_ATTR_SIZE) s.size = static_cast<uint64_t>(attr->st_size);
  s.atime = TimeOf(to_set, FUSE_SET_ATTR_ATIME_NOW, FUSE_SET_ATTR_ATIME, attr->st_atim);
  s.mtime = TimeOf(to_set, FUSE_SET_ATTR_MTIME_NOW, FUSE_SET_ATTR_MTIME, attr->st_mtim);
  Result<NodeAttr> r = Core(req).SetAttr(ino, s);
  constexpr int kTimesOnly = FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME | FUSE_SET_ATTR_ATIME_NOW |
                             FUSE_SET_ATTR_MTIME_NOW | FUSE_SET_ATTR_CTIME;
  if (!r.ok() && ErrnoFor(r.status()) == ENOENT && (to_set & ~kTimesOnly) == 0) {
    // With the writeback cache the kernel keeps a file's times and writes them back later, also
    // after the file's last name went and the disk freed it. Refusing would turn into an error
    // of the next syncfs; the times of a file that no longer exists are moot.
    struct stat gone = *attr;
    gone.st_ino = Core(req).InoOf(ino).value();
    gone.st_mode = S_IFREG;
    gone.st_nlink = 0;
    fuse_reply_attr(req, &gone, 0);
    return;
  }
  if (!r.ok()) return ReplyStatus(req, r.status());
  struct stat st = StatOf(r.value());
  fuse_reply_attr(req, &st, Of(req)->options().timeout_s);
}

void Readlink(fuse_req_t req, fuse_ino_t ino) {
  InFlight f(req);
  Result<std::string> r = Core(req).Readlink(ino);
  if (!r.ok()) return ReplyStatus(req, r.status());
  fuse_reply_readlink(req, r.value().c_str());
}

void Mknod(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode, dev_t rdev) {
  InFlight f(req);
  ReplyEntry(req, Core(req).Mknod(parent, name, mode, static_cast<uint32_t>(rdev), CallerOf(req)));
}

void Mkdir(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode) {
  InFlight f(req);
  ReplyEntry(req, Core(req).Mkdir(parent, name, mode, CallerOf(req)));
}

void Unlink(fuse_req_t req, fuse_ino_t parent, const char* name) {
  InFlight f(req);
  ReplyStatus(req, Core(req).Unlink(parent, name));
}

void Rmdir(fuse_req_t req, fuse_ino_t parent, const char* name) {
  InFlight f(req);
  ReplyStatus(req, Core(req).Rmdir(parent, name));
}

void Symlink(fuse_req_t req, const char* link, fuse_ino_t parent, const char* name) {
  InFlight f(req);
  ReplyEntry(req, Core(req).Symlink(parent, name, link, CallerOf(req)));
}

void Rename(fuse_req_t req, fuse_ino_t parent, const char* name, fuse_ino_t newparent,
            const char* newname, unsigned int flags) {
  InFlight f(req);
  ReplyStatus(req, Core(req).Rename(parent, name, newparent, newname, flags));
}

void Link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char* newname) {
  InFlight f(req);
  ReplyEntry(req, Core(req).Link(ino, newparent, newname));
}

// Per-open flags (semantics.md §0, §5.4). `direct_io` only for O_DIRECT opens that are also
// O_SYNC or O_DSYNC: then a 4 KiB write is one WRITE (the kernel's own O_DIRECT path adds an
// FSYNC). Other O_DIRECT opens take the kernel's O_DIRECT path, which writes dirty pages of the
// range back before reading and reads on through the page cache up to the kernel's size, so such
// a read sees what buffered writes did, and MAP_SHARED works.
void SetOpenFlags(fuse_file_info* fi) {
  fi->direct_io = (fi->flags & O_DIRECT) && (fi->flags & (O_SYNC | O_DSYNC)) ? 1 : 0;
  fi->keep_cache = 1;  // nothing else writes this disk: the cached pages stay valid
}

void Open(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  InFlight f(req);
  SetOpenFlags(fi);
  fi->fh = Core(req).Open(ino);
  if (fuse_reply_open(req, fi) != 0) (void)Core(req).Release(ino);
}

void Read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info*) {
  InFlight f(req);
  Result<std::string> r = Core(req).Read(ino, static_cast<uint64_t>(off), size);
  if (!r.ok()) return ReplyStatus(req, r.status());
  Of(req)->stats().bytes_read.fetch_add(r.value().size(), std::memory_order_relaxed);
  fuse_reply_buf(req, r.value().data(), r.value().size());
}

// The kernel passes O_SYNC and O_DSYNC in a direct write's flags (an O_SYNC write through the
// page cache arrives as a write-back, then an FSYNC).
void Write(fuse_req_t req, fuse_ino_t ino, const char* buf, size_t size, off_t off,
           fuse_file_info* fi) {
  InFlight f(req, InFlight::Cancel::kNever);
  const bool sync = (fi->flags & (O_SYNC | O_DSYNC)) != 0;
  Result<NodeAttr> r =
      Core(req).Write(ino, static_cast<uint64_t>(off), std::string_view(buf, size), sync);
  if (!r.ok()) return ReplyStatus(req, r.status());
  Of(req)->stats().bytes_written.fetch_add(size, std::memory_order_relaxed);
  fuse_reply_write(req, size);
}

// No FLUSH: a close makes nothing durable (as on a local file system) and there are no
// server-held locks to drop, so libfuse answers the first FLUSH ENOSYS and the kernel sends no
// more (one request less per close). The kernel still writes a file's dirty pages back (WRITEs)
// at close and reports their errors there. An fsync makes every operation this mount answered
// durable (docs/adr/0027): one COMMIT if some were answered before the server's sync.

void Release(fuse_req_t req, fuse_ino_t ino, fuse_file_info*) {
  InFlight f(req);
  ReplyStatus(req, Core(req).Release(ino));
}

void Fsync(fuse_req_t req, fuse_ino_t, int, fuse_file_info*) {
  InFlight f(req);
  ReplyStatus(req, Core(req).Sync());
}

void OpenDir(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  InFlight f(req);
  fi->fh = Core(req).OpenDir(ino);
  // The kernel keeps the listing and serves the next from it; a change of the directory's names
  // through this mount (or its mtime) resets it, and nothing else changes this disk
  // (semantics.md §3.15).
  fi->cache_readdir = 1;
  fi->keep_cache = 1;
  if (fuse_reply_open(req, fi) != 0) (void)Core(req).Release(ino);
}

// READDIR and READDIRPLUS: a page of entries in the kernel's buffer of `size`. With `plus`, each
// entry carries its attributes: the kernel links the entries into its dcache and counts a lookup
// of each (Forget is a no-op here), so `ls -l` and `find` cost no LOOKUP per name; "." and ".."
// go without a node (ino 0), as the kernel never links them.
void ReplyDir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, bool plus) {
  InFlight f(req);
  // The smallest dirent is 24 bytes plus the name, one with attributes about 150: ask for what
  // can fit.
  const size_t max_entries = std::clamp<size_t>(size / (plus ? 160 : 32), 1, 1024);
  bool eof = false;
  Result<std::vector<fs::DirItem>> r =
      Core(req).ReadDir(ino, static_cast<uint64_t>(off), max_entries, &eof, plus);
  if (!r.ok()) return ReplyStatus(req, r.status());
  std::vector<char> buf(size);
  size_t used = 0;
  for (const fs::DirItem& item : r.value()) {
    fuse_entry_param e{};
    if (item.attr) {
      e = EntryOf(req, *item.attr);
    } else {
      e.attr.st_ino = item.ino;
      e.attr.st_mode = item.type;
    }
    char* at = buf.data() + used;
    const auto next = static_cast<off_t>(item.offset);
    size_t need = plus ? fuse_add_direntry_plus(req, at, size - used, item.name.c_str(), &e, next)
                       : fuse_add_direntry(req, at, size - used, item.name.c_str(), &e.attr, next);
    if (need > size - used) break;  // the next call resumes after the last entry placed
    used += need;
  }
  fuse_reply_buf(req, buf.data(), used);
}

void ReadDir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info*) {
  ReplyDir(req, ino, size, off, /*plus=*/false);
}

void ReadDirPlus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info*) {
  ReplyDir(req, ino, size, off, /*plus=*/true);
}

void ReleaseDir(fuse_req_t req, fuse_ino_t ino, fuse_file_info*) {
  InFlight f(req);
  ReplyStatus(req, Core(req).Release(ino));
}

void FsyncDir(fuse_req_t req, fuse_ino_t, int, fuse_file_info*) {
  InFlight f(req);
  ReplyStatus(req, Core(req).Sync());
}

void StatFs(fuse_req_t req, fuse_ino_t) {
  InFlight f(req);
  Result<posix::StatFs> r = Core(req).Statfs();
  if (!r.ok()) return ReplyStatus(req, r.status());
  struct statvfs v {};
  v.f_bsize = r.value().block_size;
  v.f_frsize = r.value().block_size;
  v.f_blocks = r.value().blocks;
  v.f_bfree = r.value().blocks_free;
  v.f_bavail = r.value().blocks_free;
  v.f_files = r.value().files;
  v.f_ffree = r.value().files_free;
  v.f_favail = r.value().files_free;
  v.f_namemax = r.value().name_max;
  fuse_reply_statfs(req, &v);
}

void SetXattr(fuse_req_t req, fuse_ino_t ino, const char* name, const char* value, size_t size,
              int flags) {
  InFlight f(req);
  ReplyStatus(req, Core(req).SetXattr(ino, name, std::string_view(value, size),
                                      static_cast<uint32_t>(flags)));
}

// A value (or a list) for a getxattr/listxattr of `size`: 0 asks for the length only.
void ReplyXattr(fuse_req_t req, const std::string& value, size_t size) {
  if (size == 0) return (void)fuse_reply_xattr(req, value.size());
  if (value.size() > size) return (void)fuse_reply_err(req, ERANGE);
  fuse_reply_buf(req, value.data(), value.size());
}

void GetXattr(fuse_req_t req, fuse_ino_t ino, const char* name, size_t size) {
  InFlight f(req);
  Result<std::string> r = Core(req).GetXattr(ino, name);
  if (!r.ok()) return ReplyStatus(req, r.status());
  ReplyXattr(req, r.value(), size);
}

void ListXattr(fuse_req_t req, fuse_ino_t ino, size_t size) {
  InFlight f(req);
  Result<std::vector<std::string>> r = Core(req).ListXattr(ino);
  if (!r.ok()) return ReplyStatus(req, r.status());
  std::string list;
  for (const std::string& n : r.value()) list.append(n).push_back('\0');
  ReplyXattr(req, list, size);
}

void RemoveXattr(fuse_req_t req, fuse_ino_t ino, const char* name) {
  InFlight f(req);
  ReplyStatus(req, Core(req).RemoveXattr(ino, name));
}

void Create(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode, fuse_file_info* fi) {
  InFlight f(req);
  uint64_t handle = 0;
  Result<NodeAttr> r = Core(req).Create(parent, name, mode, CallerOf(req), &handle);
  if (!r.ok()) return ReplyStatus(req, r.status());
  SetOpenFlags(fi);
  fi->fh = handle;
  fuse_entry_param e = EntryOf(req, r.value());
  if (fuse_reply_create(req, &e, fi) != 0) (void)Core(req).Release(r.value().node);
}

void Fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t offset, off_t length,
               fuse_file_info*) {
  InFlight f(req);
  ReplyStatus(req,
              Core(req).Fallocate(ino, static_cast<uint32_t>(mode), static_cast<uint64_t>(offset),
                                  static_cast<uint64_t>(length)));
}

fuse_lowlevel_ops MakeOps() {
  fuse_lowlevel_ops ops{};
  ops.init = Init;
  ops.lookup = Lookup;
  ops.forget = Forget;
  ops.getattr = GetAttr;
  ops.setattr = SetAttr;
  ops.readlink = Readlink;
  ops.mknod = Mknod;
  ops.mkdir = Mkdir;
  ops.unlink = Unlink;
  ops.rmdir = Rmdir;
  ops.symlink = Symlink;
  ops.rename = Rename;
  ops.link = Link;
  ops.open = Open;
  ops.read = Read;
  ops.write = Write;
  ops.release = Release;
  ops.fsync = Fsync;
  ops.opendir = OpenDir;
  ops.readdir = ReadDir;
  ops.readdirplus = ReadDirPlus;
  ops.releasedir = ReleaseDir;
  ops.fsyncdir = FsyncDir;
  ops.statfs = StatFs;
  ops.setxattr = SetXattr;
  ops.getxattr = GetXattr;
  ops.listxattr = ListXattr;
  ops.removexattr = RemoveXattr;
  ops.create = Create;
  ops.forget_multi = ForgetMulti;
  ops.fallocate = Fallocate;
  return ops;
}

}  // namespace

Adapter::Adapter(fs::MountCore* core, AdapterOptions options)
    : core_(core), options_(std::move(options)) {}

Adapter::~Adapter() {
  if (session_ != nullptr) {
    if (mounted_) fuse_session_unmount(session_);
    fuse_session_destroy(session_);
  }
}

Status Adapter::Mount(const std::string& mountpoint, bool read_only) {
  std::string opts =
      "allow_other,default_permissions,noatime,nosuid,nodev,max_read=" + std::to_string(kMaxIo) +
      ",subtype=archil,fsname=" + options_.fs_name;
  if (read_only) opts += ",ro";
  std::vector<std::string> argv_s = {"archil-mount", "-o", opts};
  std::vector<char*> argv;
  for (std::string& a : argv_s) argv.push_back(a.data());
  fuse_args args = FUSE_ARGS_INIT(static_cast<int>(argv.size()), argv.data());
  static const fuse_lowlevel_ops ops = MakeOps();
  session_ = fuse_session_new(&args, &ops, sizeof(ops), this);
  if (session_ == nullptr) return Status::Internal("libfuse refused the session's options");
  if (fuse_session_mount(session_, mountpoint.c_str()) != 0) {
    return Status::Errno(EIO, "mount " + mountpoint + " failed (libfuse's message is above)");
  }
  mounted_ = true;
  mountpoint_ = mountpoint;
  return Status::Ok();
}

Status Adapter::Run() {
  fuse_loop_config* config = fuse_loop_cfg_create();
  fuse_loop_cfg_set_clone_fd(config, 1);
  fuse_loop_cfg_set_max_threads(config, options_.max_threads);
  fuse_loop_cfg_set_idle_threads(config, options_.max_threads);
  int rc = fuse_session_loop_mt(session_, config);
  fuse_loop_cfg_destroy(config);
  if (rc < 0) return Status::FromErrno(-rc, "serve the mount");
  return Status::Ok();
}

bool Adapter::WaitReady(int timeout_ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  MutexLock lock(&ready_mu_);
  while (!ready_) {
    auto left = deadline - std::chrono::steady_clock::now();
    if (left <= std::chrono::steady_clock::duration::zero()) return false;
    ready_cv_.WaitFor(&ready_mu_, left);
  }
  return true;
}

void Adapter::MarkReady() {
  MutexLock lock(&ready_mu_);
  ready_ = true;
  ready_cv_.SignalAll();
}

void Adapter::Stop() {
  if (session_ == nullptr) return;
  fuse_session_exit(session_);
  // After an unmount the connection is gone and libfuse unmounts nothing; after a failure of the
  // loop this detaches the mount, so that no dead mount is left behind.
  if (mounted_.exchange(false)) fuse_session_unmount(session_);
}

}  // namespace archil::fuse
