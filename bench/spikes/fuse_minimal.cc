// fuse_minimal: how many FUSE requests (by opcode) and how much latency the kernel adds per write
// and per read of the fio lines in Archil's published latency script
// (https://docs.archil.com/reference/limits.md#latency), with the low-level libfuse3 settings the
// design proposes (docs/semantics.md §5):
//   - FOPEN_DIRECT_IO on O_DIRECT opens (toggled per run: "default" open vs "direct_io"),
//   - a WRITE whose flags carry O_SYNC/O_DSYNC is the durable write (counted; the store is RAM),
//   - FSYNC, FSYNCDIR and FLUSH implemented (never ENOSYS); noflush on read-only opens,
//   - non-zero attr/entry timeouts (--timeout, default 30 s), max_write 1 MiB,
//   - writeback cache off (--writeback turns it on; it is negotiated once, at INIT).
// The store is an in-memory flat directory (no network, no disk), so the latency is FUSE alone.
// Every request is counted by opcode in a hand-rolled session loop that peeks at the kernel's
// fuse_in_header before libfuse dispatches it, so requests libfuse answers itself (INIT,
// FORGET, unimplemented ops) are counted too.
//
// Usage:
//   fuse_minimal --bench [--runtime 10] [--size-mib 1024] [--repeat 3] [--writeback] [--timeout S]
//       mounts under /tmp, runs the latency script's fio write and read lines on the mount for
//       both open modes, prints requests/op by opcode and fio clat p50/p95, unmounts.
//   fuse_minimal MOUNTPOINT [--direct-io] [--writeback] [--timeout S]
//       plain foreground daemon; prints request counts when unmounted or interrupted.

#define FUSE_USE_VERSION 34
#include <fuse_lowlevel.h>
#include <linux/fuse.h>  // struct fuse_in_header and the opcode numbers
#include <sys/mount.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

namespace {

// ---- settings -----------------------------------------------------------------------------------

double g_timeout = 30.0;               // attr and entry timeout, seconds
bool g_writeback = false;              // FUSE_CAP_WRITEBACK_CACHE
std::atomic<bool> g_direct_io{false};  // set FOPEN_DIRECT_IO when the open has O_DIRECT
constexpr unsigned kMaxWrite = 1 << 20;

// ---- request counters ---------------------------------------------------------------------------

constexpr int kMaxOpcode = 64;
std::array<std::atomic<uint64_t>, kMaxOpcode> g_ops{};
std::atomic<uint64_t> g_sync_writes{0}, g_direct_writes{0};

const char* OpName(int op) {
  static const std::map<int, const char*> kNames = {
      {FUSE_LOOKUP, "LOOKUP"},
      {FUSE_FORGET, "FORGET"},
      {FUSE_GETATTR, "GETATTR"},
      {FUSE_SETATTR, "SETATTR"},
      {FUSE_UNLINK, "UNLINK"},
      {FUSE_OPEN, "OPEN"},
      {FUSE_READ, "READ"},
      {FUSE_WRITE, "WRITE"},
      {FUSE_STATFS, "STATFS"},
      {FUSE_RELEASE, "RELEASE"},
      {FUSE_FSYNC, "FSYNC"},
      {FUSE_SETXATTR, "SETXATTR"},
      {FUSE_GETXATTR, "GETXATTR"},
      {FUSE_LISTXATTR, "LISTXATTR"},
      {FUSE_FLUSH, "FLUSH"},
      {FUSE_INIT, "INIT"},
      {FUSE_OPENDIR, "OPENDIR"},
      {FUSE_READDIR, "READDIR"},
      {FUSE_RELEASEDIR, "RELEASEDIR"},
      {FUSE_FSYNCDIR, "FSYNCDIR"},
      {FUSE_ACCESS, "ACCESS"},
      {FUSE_CREATE, "CREATE"},
      {FUSE_INTERRUPT, "INTERRUPT"},
      {FUSE_DESTROY, "DESTROY"},
      {FUSE_IOCTL, "IOCTL"},
      {FUSE_BATCH_FORGET, "BATCH_FORGET"},
      {FUSE_FALLOCATE, "FALLOCATE"},
      {FUSE_READDIRPLUS, "READDIRPLUS"},
      {FUSE_LSEEK, "LSEEK"},
  };
  auto it = kNames.find(op);
  return it == kNames.end() ? nullptr : it->second;
}

using Counts = std::array<uint64_t, kMaxOpcode + 2>;  // + sync writes, direct writes

Counts Snapshot() {
  Counts c{};
  for (int i = 0; i < kMaxOpcode; ++i) c[i] = g_ops[i].load();
  c[kMaxOpcode] = g_sync_writes.load();
  c[kMaxOpcode + 1] = g_direct_writes.load();
  return c;
}

// "WRITE 1.000 FSYNC 1.000 ... (+ LOOKUP 1 OPEN 1 ...)" for the requests between two snapshots:
// per op (divided by `per`) where there is at least one per 100 ops, else absolute counts (the
// per-file setup: create, open, flush, release ...). *total gets all requests divided by `per`.
std::string Describe(const Counts& a, const Counts& b, double per, double* total) {
  std::string frequent, rare;
  *total = 0;
  char buf[64];
  for (int i = 0; i < kMaxOpcode; ++i) {
    uint64_t d = b[i] - a[i];
    if (d == 0) continue;
    *total += d;
    std::string name = OpName(i) ? OpName(i) : "OP" + std::to_string(i);
    if (d / per >= 0.01) {
      std::snprintf(buf, sizeof buf, " %s %.3f", name.c_str(), d / per);
      frequent += buf;
    } else {
      std::snprintf(buf, sizeof buf, " %s %lu", name.c_str(), static_cast<unsigned long>(d));
      rare += buf;
    }
  }
  std::string s = frequent.empty() ? "" : frequent.substr(1);
  if (!rare.empty()) s += " (+" + rare + ")";
  uint64_t writes = b[FUSE_WRITE] - a[FUSE_WRITE];
  if (writes) {
    std::snprintf(buf, sizeof buf, " [WRITE flags: O_SYNC %.0f%%, O_DIRECT %.0f%%]",
                  100.0 * (b[kMaxOpcode] - a[kMaxOpcode]) / writes,
                  100.0 * (b[kMaxOpcode + 1] - a[kMaxOpcode + 1]) / writes);
    s += buf;
  }
  *total /= per;
  return s;
}

// ---- the in-memory store: one flat directory of regular files, 4 KiB blocks, holes read 0 -------

constexpr size_t kBlock = 4096;

struct Inode {
  fuse_ino_t ino = 0;
  mode_t mode = 0;
  uint64_t size = 0;
  uint32_t nlink = 1;
  timespec mtime{}, ctime{};
  std::unordered_map<uint64_t, std::unique_ptr<char[]>> blocks;
};

std::mutex g_mu;  // the session loop is single-threaded; the lock keeps the store honest anyway
std::map<fuse_ino_t, std::unique_ptr<Inode>> g_inodes;
std::map<std::string, fuse_ino_t> g_root;  // names in the root directory
fuse_ino_t g_next_ino = 2;

timespec Now() {
  timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  return t;
}

struct stat Attr(const Inode& n) {
  struct stat st {};
  st.st_ino = n.ino;
  st.st_mode = n.mode;
  st.st_nlink = n.nlink;
  st.st_size = n.size;
  st.st_blksize = kBlock;
  st.st_blocks = n.blocks.size() * (kBlock / 512);
  st.st_uid = getuid();
  st.st_gid = getgid();
  st.st_mtim = n.mtime;
  st.st_ctim = n.ctime;
  st.st_atim = n.mtime;
  return st;
}

Inode* Find(fuse_ino_t ino) {
  auto it = g_inodes.find(ino);
  return it == g_inodes.end() ? nullptr : it->second.get();
}

void ReplyEntry(fuse_req_t req, const Inode& n) {
  fuse_entry_param e{};
  e.ino = n.ino;
  e.attr = Attr(n);
  e.attr_timeout = g_timeout;
  e.entry_timeout = g_timeout;
  fuse_reply_entry(req, &e);
}

// Open flags as the design proposes: direct_io for O_DIRECT opens, no FLUSH for read-only opens.
void SetOpenFlags(fuse_file_info* fi) {
  if (g_direct_io && (fi->flags & O_DIRECT)) fi->direct_io = 1;
  if ((fi->flags & O_ACCMODE) == O_RDONLY) fi->noflush = 1;
}

// ---- low-level operations -----------------------------------------------------------------------

void Init(void*, fuse_conn_info* conn) {
  conn->max_write = kMaxWrite;
  conn->want &= ~FUSE_CAP_SPLICE_READ;  // keep request headers in memory so they can be counted
  if (g_writeback && (conn->capable & FUSE_CAP_WRITEBACK_CACHE))
    conn->want |= FUSE_CAP_WRITEBACK_CACHE;
  else
    conn->want &= ~FUSE_CAP_WRITEBACK_CACHE;
  auto root = std::make_unique<Inode>();
  root->ino = FUSE_ROOT_ID;
  root->mode = S_IFDIR | 0755;
  root->nlink = 2;
  root->mtime = root->ctime = Now();
  g_inodes[FUSE_ROOT_ID] = std::move(root);
}

void Lookup(fuse_req_t req, fuse_ino_t parent, const char* name) {
  std::lock_guard l(g_mu);
  auto it = g_root.find(name);
  if (parent != FUSE_ROOT_ID || it == g_root.end()) {
    fuse_entry_param e{};  // negative entry, cached for the entry timeout
    e.entry_timeout = g_timeout;
    fuse_reply_entry(req, &e);
    return;
  }
  ReplyEntry(req, *Find(it->second));
}

void Getattr(fuse_req_t req, fuse_ino_t ino, fuse_file_info*) {
  std::lock_guard l(g_mu);
  Inode* n = Find(ino);
  if (!n) return (void)fuse_reply_err(req, ENOENT);
  struct stat st = Attr(*n);
  fuse_reply_attr(req, &st, g_timeout);
}

void Setattr(fuse_req_t req, fuse_ino_t ino, struct stat* attr, int to_set, fuse_file_info*) {
  std::lock_guard l(g_mu);
  Inode* n = Find(ino);
  if (!n) return (void)fuse_reply_err(req, ENOENT);
  if (to_set & FUSE_SET_ATTR_MODE) n->mode = (n->mode & S_IFMT) | (attr->st_mode & 07777);
  if (to_set & FUSE_SET_ATTR_SIZE) {
    n->size = attr->st_size;
    std::erase_if(n->blocks, [&](auto& b) { return b.first * kBlock >= n->size; });
  }
  if (to_set & FUSE_SET_ATTR_MTIME) n->mtime = attr->st_mtim;
  if (to_set & FUSE_SET_ATTR_MTIME_NOW) n->mtime = Now();
  n->ctime = Now();
  struct stat st = Attr(*n);
  fuse_reply_attr(req, &st, g_timeout);
}

void Create(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode, fuse_file_info* fi) {
  std::lock_guard l(g_mu);
  if (parent != FUSE_ROOT_ID) return (void)fuse_reply_err(req, ENOENT);
  auto [it, fresh] = g_root.try_emplace(name, 0);
  if (fresh) {
    auto n = std::make_unique<Inode>();
    n->ino = it->second = g_next_ino++;
    n->mode = S_IFREG | (mode & 07777);
    n->mtime = n->ctime = Now();
    g_inodes[n->ino] = std::move(n);
  }
  SetOpenFlags(fi);
  fuse_entry_param e{};
  Inode* n = Find(it->second);
  e.ino = n->ino;
  e.attr = Attr(*n);
  e.attr_timeout = e.entry_timeout = g_timeout;
  fuse_reply_create(req, &e, fi);
}

void Open(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  std::lock_guard l(g_mu);
  Inode* n = Find(ino);
  if (!n) return (void)fuse_reply_err(req, ENOENT);
  if (fi->flags & O_TRUNC) n->blocks.clear(), n->size = 0;
  SetOpenFlags(fi);
  fuse_reply_open(req, fi);
}

void Read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info*) {
  std::lock_guard l(g_mu);
  Inode* n = Find(ino);
  if (!n) return (void)fuse_reply_err(req, ENOENT);
  if (static_cast<uint64_t>(off) >= n->size) return (void)fuse_reply_buf(req, nullptr, 0);
  size = std::min<uint64_t>(size, n->size - off);
  std::vector<char> out(size);
  for (size_t done = 0; done < size;) {
    uint64_t pos = off + done, blk = pos / kBlock, in = pos % kBlock;
    size_t len = std::min(size - done, kBlock - in);
    auto it = n->blocks.find(blk);
    if (it != n->blocks.end()) std::memcpy(out.data() + done, it->second.get() + in, len);
    done += len;
  }
  fuse_reply_buf(req, out.data(), out.size());
}

void Write(fuse_req_t req, fuse_ino_t ino, const char* buf, size_t size, off_t off,
           fuse_file_info* fi) {
  std::lock_guard l(g_mu);
  Inode* n = Find(ino);
  if (!n) return (void)fuse_reply_err(req, ENOENT);
  for (size_t done = 0; done < size;) {
    uint64_t pos = off + done, blk = pos / kBlock, in = pos % kBlock;
    size_t len = std::min(size - done, kBlock - in);
    auto& b = n->blocks[blk];
    if (!b) b.reset(new char[kBlock]());
    std::memcpy(b.get() + in, buf + done, len);
    done += len;
  }
  n->size = std::max<uint64_t>(n->size, off + size);
  n->mtime = n->ctime = Now();
  // The write request carries the file's flags plus O_DSYNC/O_SYNC from RWF_DSYNC/RWF_SYNC: this
  // is where a real client makes the write durable (one server round trip) before replying.
  if (fi->flags & (O_SYNC | O_DSYNC)) ++g_sync_writes;
  if (fi->flags & O_DIRECT) ++g_direct_writes;
  fuse_reply_write(req, size);
}

void Flush(fuse_req_t req, fuse_ino_t, fuse_file_info*) { fuse_reply_err(req, 0); }
void Release(fuse_req_t req, fuse_ino_t, fuse_file_info*) { fuse_reply_err(req, 0); }
// Nothing is ever dirty in RAM, so FSYNC is answered locally, as the design does for a clean file.
void Fsync(fuse_req_t req, fuse_ino_t, int, fuse_file_info*) { fuse_reply_err(req, 0); }
void Fsyncdir(fuse_req_t req, fuse_ino_t, int, fuse_file_info*) { fuse_reply_err(req, 0); }

void Fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t off, off_t len, fuse_file_info*) {
  std::lock_guard l(g_mu);
  Inode* n = Find(ino);
  if (!n) return (void)fuse_reply_err(req, ENOENT);
  if (mode & ~FALLOC_FL_KEEP_SIZE) return (void)fuse_reply_err(req, EOPNOTSUPP);
  if (!(mode & FALLOC_FL_KEEP_SIZE)) n->size = std::max<uint64_t>(n->size, off + len);
  fuse_reply_err(req, 0);
}

void Unlink(fuse_req_t req, fuse_ino_t parent, const char* name) {
  std::lock_guard l(g_mu);
  auto it = g_root.find(name);
  if (parent != FUSE_ROOT_ID || it == g_root.end()) return (void)fuse_reply_err(req, ENOENT);
  g_inodes.erase(it->second);  // fine for a spike: no open-unlinked files
  g_root.erase(it);
  fuse_reply_err(req, 0);
}

void Readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info*) {
  std::lock_guard l(g_mu);
  if (ino != FUSE_ROOT_ID) return (void)fuse_reply_err(req, ENOTDIR);
  std::vector<char> buf(size);
  size_t used = 0;
  off_t i = 0;
  for (auto& [name, child] : g_root) {
    if (i++ < off) continue;
    struct stat st {};
    st.st_ino = child;
    st.st_mode = S_IFREG;
    size_t need = fuse_add_direntry(req, buf.data() + used, size - used, name.c_str(), &st, i);
    if (need > size - used) break;
    used += need;
  }
  fuse_reply_buf(req, buf.data(), used);
}

const fuse_lowlevel_ops kOps = [] {
  fuse_lowlevel_ops o{};
  o.init = Init;
  o.lookup = Lookup;
  o.getattr = Getattr;
  o.setattr = Setattr;
  o.create = Create;
  o.open = Open;
  o.read = Read;
  o.write = Write;
  o.flush = Flush;
  o.release = Release;
  o.fsync = Fsync;
  o.fsyncdir = Fsyncdir;
  o.fallocate = Fallocate;
  o.unlink = Unlink;
  o.readdir = Readdir;
  return o;
}();

// The session loop: count each request by opcode, then let libfuse dispatch it.
void Loop(fuse_session* se) {
  fuse_buf buf{};
  while (!fuse_session_exited(se)) {
    int res = fuse_session_receive_buf(se, &buf);
    if (res == -EINTR) continue;
    if (res <= 0) break;  // 0 or -ENODEV once unmounted
    if (!(buf.flags & FUSE_BUF_IS_FD) && buf.size >= sizeof(fuse_in_header)) {
      uint32_t op = static_cast<const fuse_in_header*>(buf.mem)->opcode;
      if (op < kMaxOpcode) ++g_ops[op];
    }
    fuse_session_process_buf(se, &buf);
  }
  free(buf.mem);
}

fuse_session* NewSession(const char* argv0) {
  const char* argv[] = {argv0, "-o", "default_permissions,fsname=fuse_minimal"};
  fuse_args args = FUSE_ARGS_INIT(3, const_cast<char**>(argv));
  fuse_session* se = fuse_session_new(&args, &kOps, sizeof kOps, nullptr);
  if (!se) std::exit(1);
  return se;
}

// ---- --bench: run the latency script's fio lines on the mount -----------------------------------

struct Fio {
  double ios = 0, p50_us = 0, p95_us = 0;
};

// Runs fio (JSON output) and extracts total I/Os and clat p50/p95 for `dir` ("read"/"write").
Fio RunFio(const std::string& args, const char* dir) {
  std::string cmd = "fio " + args + " --output-format=json | jq -r '.jobs[0]." + dir +
                    " | \"\\(.total_ios) \\(.clat_ns.percentile[\"50.000000\"] / 1e3) "
                    "\\(.clat_ns.percentile[\"95.000000\"] / 1e3)\"'";
  Fio f;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p || std::fscanf(p, "%lf %lf %lf", &f.ios, &f.p50_us, &f.p95_us) != 3) {
    std::fprintf(stderr, "fio failed: %s\n", cmd.c_str());
    std::exit(1);
  }
  pclose(p);
  return f;
}

void Row(const char* row, const char* mode, int rep, const Counts& before, const Fio& f) {
  double total = 0;
  std::string detail = Describe(before, Snapshot(), f.ios, &total);
  std::printf("%-11s %-9s %3d %7.0f %7.1f %7.1f %6.2f  %s\n", row, mode, rep, f.ios, f.p50_us,
              f.p95_us, total, detail.c_str());
  std::fflush(stdout);
}

int Bench(const char* argv0, int runtime, int size_mib, int repeat) {
  char tmpl[] = "/tmp/fuse_minimal.XXXXXX";
  if (!mkdtemp(tmpl)) return perror("mkdtemp"), 1;
  const std::string mnt = tmpl;
  fuse_session* se = NewSession(argv0);
  if (fuse_session_mount(se, mnt.c_str()) != 0) return 1;
  std::thread loop(Loop, se);

  const std::string fio_line =
      "--name=t --bs=4k --iodepth=1 --direct=1 --time_based --runtime=" + std::to_string(runtime) +
      " --size=" + std::to_string(size_mib) + "M";
  std::printf(
      "mount %s: attr/entry timeout %.0f s, writeback %s, max_write 1 MiB, "
      "fio runtime %d s, file size %d MiB\n",
      mnt.c_str(), g_timeout, g_writeback ? "ON" : "off", runtime, size_mib);
  std::printf("%-11s %-9s %3s %7s %7s %7s %6s  %s\n", "row", "open", "rep", "ios", "p50_us",
              "p95_us", "req/op", "requests per op by opcode");

  for (bool direct : {false, true}) {
    g_direct_io = direct;
    for (int rep = 1; rep <= repeat; ++rep) {
      std::string file = mnt + "/w" + std::to_string(direct) + std::to_string(rep);
      Counts before = Snapshot();
      Fio f = RunFio(fio_line + " --filename=" + file + " --rw=randwrite --sync=1", "write");
      Row("O_SYNC wr", direct ? "direct_io" : "default", rep, before, f);
      unlink(file.c_str());
    }
  }

  // The read row's file is filled the way the latency script fills it (buffered 1 MiB writes +
  // fsync).
  const std::string rfile = mnt + "/r";
  Counts before = Snapshot();
  Fio fill = RunFio("--name=fill --filename=" + rfile + " --size=" + std::to_string(size_mib) +
                        "M --rw=write --bs=1M --end_fsync=1",
                    "write");
  double total = 0;
  std::printf("fill: %.0f x 1 MiB writes -> %s\n", fill.ios,
              Describe(before, Snapshot(), fill.ios, &total).c_str());
  for (bool direct : {false, true}) {
    g_direct_io = direct;
    for (int rep = 1; rep <= repeat; ++rep) {
      before = Snapshot();
      Fio f = RunFio(fio_line + " --filename=" + rfile + " --rw=randread", "read");
      Row("read", direct ? "direct_io" : "default", rep, before, f);
    }
  }
  unlink(rfile.c_str());

  if (umount2(mnt.c_str(), 0) != 0) perror("umount2");  // the loop then sees ENODEV and returns
  loop.join();
  fuse_session_unmount(se);
  fuse_session_destroy(se);
  rmdir(mnt.c_str());
  return 0;
}

int Daemon(const char* argv0, const char* mnt) {
  fuse_session* se = NewSession(argv0);
  if (fuse_set_signal_handlers(se) != 0 || fuse_session_mount(se, mnt) != 0) return 1;
  Loop(se);
  fuse_session_unmount(se);
  fuse_remove_signal_handlers(se);
  fuse_session_destroy(se);
  std::printf("requests:");
  for (int i = 0; i < kMaxOpcode; ++i)
    if (uint64_t n = g_ops[i].load()) std::printf(" %s %lu", OpName(i) ? OpName(i) : "OP?", n);
  std::printf("\nWRITEs with O_SYNC/O_DSYNC %lu, with O_DIRECT %lu\n",
              static_cast<unsigned long>(g_sync_writes.load()),
              static_cast<unsigned long>(g_direct_writes.load()));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  bool bench = false;
  int runtime = 10, size_mib = 1024, repeat = 3;
  const char* mnt = nullptr;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--bench")
      bench = true;
    else if (a == "--writeback")
      g_writeback = true;
    else if (a == "--timeout" && i + 1 < argc)
      g_timeout = std::stod(argv[++i]);
    else if (a == "--runtime" && i + 1 < argc)
      runtime = std::stoi(argv[++i]);
    else if (a == "--size-mib" && i + 1 < argc)
      size_mib = std::stoi(argv[++i]);
    else if (a == "--repeat" && i + 1 < argc)
      repeat = std::stoi(argv[++i]);
    else if (a == "--direct-io")
      g_direct_io = true;
    else if (a[0] != '-' && !mnt)
      mnt = argv[i];
    else {
      std::fprintf(stderr,
                   "usage: fuse_minimal --bench [--runtime S] [--size-mib N] [--repeat N] "
                   "[--writeback] [--timeout S]\n"
                   "       fuse_minimal MOUNTPOINT [--direct-io] [--writeback] [--timeout S]\n");
      return 2;
    }
  }
  if (bench) return Bench(argv[0], runtime, size_mib, repeat);
  if (!mnt) return std::fprintf(stderr, "need MOUNTPOINT or --bench\n"), 2;
  return Daemon(argv[0], mnt);
}
