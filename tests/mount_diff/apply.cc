#include "mount_diff/apply.h"

#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace archil::testing::mount_diff {
namespace {

struct AlignedBuf {
  explicit AlignedBuf(size_t n) {
    if (posix_memalign(&p, 4096, std::max<size_t>(n, 1)) != 0) std::abort();
    std::memset(p, 0, std::max<size_t>(n, 1));
  }
  ~AlignedBuf() { std::free(p); }
  AlignedBuf(const AlignedBuf&) = delete;
  AlignedBuf& operator=(const AlignedBuf&) = delete;
  char* get() const { return static_cast<char*>(p); }
  void* p = nullptr;
};

bool IsDir(int fd) {
  struct stat st {};
  return fstat(fd, &st) == 0 && S_ISDIR(st.st_mode);
}

bool DirectAligned(int64_t off, size_t len) { return off % 512 == 0 && len % 512 == 0; }

// Where a write on `fd` goes: `off` for pwrite (-1: write), but the end of file under O_APPEND.
int64_t WritePosition(int fd, int64_t off) {
  struct stat st {};
  if ((fcntl(fd, F_GETFL) & O_APPEND) && fstat(fd, &st) == 0) return st.st_size;
  return off >= 0 ? off : lseek(fd, 0, SEEK_CUR);
}

// An O_DIRECT call ext4 refused for its alignment, repeated without O_DIRECT (kAllowed:
// odirect_align).
template <typename Fn>
long WithoutDirect(int fd, Fn fn) {
  int fl = fcntl(fd, F_GETFL);
  fcntl(fd, F_SETFL, fl & ~O_DIRECT);
  long rc = fn();
  int e = errno;
  fcntl(fd, F_SETFL, fl);
  errno = e;
  return rc;
}

std::string DirentType(unsigned char t) {
  switch (t) {
    case DT_REG:
      return "f";
    case DT_DIR:
      return "d";
    case DT_LNK:
      return "l";
    case DT_UNKNOWN:
      return "?";
    default:
      return std::to_string(t);
  }
}

Outcome ReadDirOutcome(const Side& s, const std::string& rel) {
  DIR* d = opendir(s.P(rel).c_str());
  if (d == nullptr) return {Err(errno)};
  std::vector<std::string> names;
  std::string bad;
  struct stat self {};
  struct stat parent {};
  fstat(dirfd(d), &self);
  const bool have_parent = stat((s.P(rel) + "/..").c_str(), &parent) == 0;
  int read_errno = 0;
  for (;;) {
    errno = 0;
    dirent* e = readdir(d);
    if (e == nullptr) {
      read_errno = errno;
      break;
    }
    names.push_back(std::string(e->d_name) + ":" + DirentType(e->d_type));
    std::string n = e->d_name;
    uint64_t want = 0;
    if (n == ".") {
      want = self.st_ino;
    } else if (n == "..") {
      if (s.mount && e->d_ino == self.st_ino && Allowed("dotdot_ino")) continue;
      if (!have_parent) continue;  // not searchable by this user
      want = parent.st_ino;
    } else {
      struct stat st {};
      if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
      want = st.st_ino;
    }
    if (e->d_ino != want) {
      bad += " d_ino(" + n + ")=" + std::to_string(e->d_ino) + "!=st_ino " + std::to_string(want);
    }
  }
  closedir(d);
  std::sort(names.begin(), names.end());
  std::string t = read_errno ? "readdir " + Err(read_errno) : "ok";
  for (auto& n : names) t += " " + n;
  if (!bad.empty()) t += " INCONSISTENT:" + bad;
  return {t};
}

// pwrite (write if `off` is -1) from an aligned buffer; on ext4, an O_DIRECT write refused for
// its alignment is repeated without O_DIRECT (kAllowed: odirect_align).
long WriteTo(const Side& s, int fd, bool direct, const std::string& data, int64_t off) {
  AlignedBuf b(data.size());
  std::memcpy(b.get(), data.data(), data.size());
  auto call = [&] {
    return off >= 0 ? pwrite(fd, b.get(), data.size(), off) : write(fd, b.get(), data.size());
  };
  long rc = call();
  if (rc < 0 && errno == EINVAL && direct && !s.mount &&
      !DirectAligned(WritePosition(fd, off), data.size()) && Allowed("odirect_align")) {
    rc = WithoutDirect(fd, call);
  }
  return rc;
}

// Runs `op` as op.as (uid and gid) in a child process with no supplementary groups.
Outcome ApplyAs(const Side& s, const Op& op) {
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0) return {"pipe failed"};
  pid_t pid = fork();
  if (pid == 0) {
    close(p[0]);
    if (setgroups(0, nullptr) != 0 || setgid(op.as) != 0 || setuid(op.as) != 0) _exit(1);
    Side c;
    c.name = s.name;
    c.root = s.root;
    c.mount = s.mount;
    c.child = true;
    Op o = op;
    o.as = 0;
    Outcome r = Apply(c, o);
    std::string msg = r.text + '\0' + r.data;
    for (size_t done = 0; done < msg.size();) {
      ssize_t n = write(p[1], msg.data() + done, msg.size() - done);
      if (n <= 0) _exit(1);
      done += static_cast<size_t>(n);
    }
    _exit(0);
  }
  close(p[1]);
  std::string msg;
  char buf[4096];
  for (;;) {
    ssize_t n = read(p[0], buf, sizeof(buf));
    if (n <= 0) break;
    msg.append(buf, static_cast<size_t>(n));
  }
  close(p[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return {"child failed"};
  size_t z = msg.find('\0');
  return {msg.substr(0, z), z == std::string::npos ? "" : msg.substr(z + 1)};
}

}  // namespace

Outcome Apply(Side& s, const Op& op) {
  if (op.as != 0) return ApplyAs(s, op);
  Slot* sl = s.child ? nullptr : &s.slots[op.slot];
  static Slot no_slot;  // as another user: slot operations are never generated
  if (sl == nullptr) {
    no_slot = Slot{};
    sl = &no_slot;
  }
  const int fd = sl ? sl->fd : -1;
  const bool direct = sl && (sl->flags & O_DIRECT);
  const bool direct_io = sl && DirectIo(sl->flags);
  const std::string p1 = s.P(op.p1), p2 = s.P(op.p2);
  switch (op.kind) {
    case kOpen: {
      std::string prefix;
      if (sl && sl->fd >= 0) {
        prefix = "close=" + Rc(close(sl->fd)) + "; ";
        sl->fd = -1;
      }
      int nfd = open(p1.c_str(), op.flags | O_CLOEXEC, op.mode);
      std::string t = prefix + Rc(nfd < 0 ? -1 : 0);
      if (nfd < 0) return {t};
      if (s.child) {  // as another user: no slot; write what the op carries, then close
        if (!op.data.empty()) {
          t += " write=" + Rc(WriteTo(s, nfd, op.flags & O_DIRECT, op.data, -1));
        }
        t += " close=" + Rc(close(nfd));
        return {t};
      }
      *sl = Slot{nfd, op.p1, op.flags};
      return {t};
    }
    case kClose: {
      long rc = close(fd);
      std::string t = Rc(rc);
      sl->fd = -1;
      return {t};
    }
    case kPwrite:
      return {Rc(WriteTo(s, fd, direct, op.data, op.off))};
    case kWrite:
      return {Rc(WriteTo(s, fd, direct, op.data, -1))};
    case kPread:
    case kRead: {
      AlignedBuf b(op.len);
      auto call = [&] {
        return op.kind == kPread ? pread(fd, b.get(), op.len, op.off) : read(fd, b.get(), op.len);
      };
      long rc = call();
      if (rc < 0 && errno == EINVAL && direct && !s.mount &&
          !DirectAligned(op.kind == kPread ? op.off : lseek(fd, 0, SEEK_CUR), op.len) &&
          Allowed("odirect_align")) {
        rc = WithoutDirect(fd, call);
      }
      std::string t = Rc(rc);
      return {t, rc > 0 ? std::string(b.get(), static_cast<size_t>(rc)) : ""};
    }
    case kLseek: {
      long rc = lseek(fd, op.off, op.flags);
      std::string t = Rc(rc);
      if (IsDir(fd) && Allowed("dir_lseek")) {
        lseek(fd, 0, SEEK_SET);  // the same position on both sides
        return {"directory"};
      }
      return {t};
    }
    case kSeekHole: {
      struct stat st {};
      const bool have_size = fstat(fd, &st) == 0;
      off_t r = lseek(fd, op.off, op.flags);
      int e = errno;
      if (IsDir(fd) && Allowed("dir_lseek")) {
        lseek(fd, 0, SEEK_SET);  // the same position on both sides
        return {"directory"};
      }
      if (fd >= 0) lseek(fd, op.off, SEEK_SET);  // the same position on both sides
      if (have_size && S_ISREG(st.st_mode) && op.off < st.st_size &&
          ((r >= op.off && r <= st.st_size) || (r < 0 && e == ENXIO && op.flags == SEEK_DATA)) &&
          Allowed("seek_data_hole")) {
        return {"in [off, size]"};
      }
      errno = e;
      return {Rc(r)};
    }
    case kFtruncate:
      return {Rc(ftruncate(fd, static_cast<off_t>(op.len)))};
    case kTruncate:
      return {Rc(truncate(p1.c_str(), static_cast<off_t>(op.len)))};
    case kFallocate:
      return {Rc(fallocate(fd, op.flags, op.off, static_cast<off_t>(op.len)))};
    case kMmapWrite: {
      struct stat st {};
      if (fstat(fd, &st) != 0) return {"fstat " + Err(errno)};
      void* m = mmap(nullptr, op.len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, op.off);
      if (m == MAP_FAILED) {
        int e = errno;
        if (direct_io && s.mount && e == ENODEV && Allowed("odirect_mmap")) return {"no mapping"};
        return {"mmap " + Err(e)};
      }
      if (direct_io && !s.mount && Allowed("odirect_mmap")) {
        munmap(m, op.len);
        return {"no mapping"};
      }
      const int64_t end = std::min<int64_t>(op.off + static_cast<int64_t>(op.len), st.st_size);
      const size_t n = end > op.off ? static_cast<size_t>(end - op.off) : 0;
      std::memcpy(m, op.data.data(), n);  // only within the file: beyond it is SIGBUS
      long rs = msync(m, op.len, MS_SYNC);
      std::string t = "mapped, wrote " + std::to_string(n) + ", msync " + Rc(rs);
      munmap(m, op.len);
      return {t};
    }
    case kRename:
      return {Rc(
          renameat2(AT_FDCWD, p1.c_str(), AT_FDCWD, p2.c_str(), static_cast<unsigned>(op.flags)))};
    case kLink:
      return {
          Rc(linkat(AT_FDCWD, p1.c_str(), AT_FDCWD, p2.c_str(), op.flags ? AT_SYMLINK_FOLLOW : 0))};
    case kSymlink:
      return {Rc(symlink(op.data.c_str(), p2.c_str()))};
    case kReadlink: {
      char buf[4096];
      long rc = readlink(p1.c_str(), buf, sizeof(buf));
      std::string t = Rc(rc);
      return {t, rc > 0 ? std::string(buf, static_cast<size_t>(rc)) : ""};
    }
    case kUnlink:
      return {Rc(unlink(p1.c_str()))};
    case kMkdir:
      return {Rc(mkdir(p1.c_str(), op.mode))};
    case kRmdir:
      return {Rc(rmdir(p1.c_str()))};
    case kChmod:
      return {Rc(chmod(p1.c_str(), op.mode))};
    case kFchmod:
      return {Rc(fchmod(fd, op.mode))};
    case kChown:
      return {
          Rc(op.nofollow ? lchown(p1.c_str(), op.uid, op.gid) : chown(p1.c_str(), op.uid, op.gid))};
    case kFchown:
      return {Rc(fchown(fd, op.uid, op.gid))};
    case kUtimens: {
      const int fl = op.nofollow ? AT_SYMLINK_NOFOLLOW : 0;
      // Explicit times are compared right away (kAllowed: times, for every other instant),
      // through a descriptor taken first: a path walk that follows a symlink updates its atime
      // on ext4 (relatime), and the walk may pass the very symlink whose times were set.
      const int pfd = open(p1.c_str(), O_PATH | O_CLOEXEC | (op.nofollow ? O_NOFOLLOW : 0));
      long rc = utimensat(AT_FDCWD, p1.c_str(), op.ts, fl);
      std::string t = Rc(rc);
      if (rc == 0) {
        struct stat st {};
        if (pfd < 0 ? fstatat(AT_FDCWD, p1.c_str(), &st, fl) != 0 : fstat(pfd, &st) != 0) {
          t += " stat " + Err(errno);
        }
        if (op.ts[0].tv_nsec != UTIME_NOW && op.ts[0].tv_nsec != UTIME_OMIT) {
          t += " atime=" + std::to_string(st.st_atim.tv_sec) + "." +
               std::to_string(st.st_atim.tv_nsec);
        }
        if (op.ts[1].tv_nsec != UTIME_NOW && op.ts[1].tv_nsec != UTIME_OMIT) {
          t += " mtime=" + std::to_string(st.st_mtim.tv_sec) + "." +
               std::to_string(st.st_mtim.tv_nsec);
        }
      }
      if (pfd >= 0) close(pfd);
      return {t};
    }
    case kSetxattr:
      return {Rc((op.nofollow ? lsetxattr : setxattr)(p1.c_str(), op.name.c_str(), op.data.data(),
                                                      op.data.size(), op.flags))};
    case kFsetxattr:
      return {Rc(fsetxattr(fd, op.name.c_str(), op.data.data(), op.data.size(), op.flags))};
    case kGetxattr: {
      std::string buf(op.len, '\0');
      long rc =
          (op.nofollow ? lgetxattr : getxattr)(p1.c_str(), op.name.c_str(), buf.data(), op.len);
      std::string t = Rc(rc);
      return {t, rc > 0 && op.len > 0 ? buf.substr(0, static_cast<size_t>(rc)) : ""};
    }
    case kListxattr: {
      std::string buf(op.len, '\0');
      long rc = (op.nofollow ? llistxattr : listxattr)(p1.c_str(), buf.data(), op.len);
      std::string t = Rc(rc);
      if (rc > 0 && op.len > 0) t += UserXattrs(buf.substr(0, static_cast<size_t>(rc)));
      return {t};
    }
    case kRemovexattr:
      return {Rc(removexattr(p1.c_str(), op.name.c_str()))};
    case kOrphan: {  // then the same calls as kPwrite, kPread and kFstat through the slot
      std::string t = "unlink " + Rc(unlink(s.P(sl->path).c_str()));
      Op w = op, r = op, f = op;
      w.kind = kPwrite;
      r.kind = kPread;
      r.len = op.data.size() + 100;
      f.kind = kFstat;
      t += "; pwrite " + Apply(s, w).text;
      Outcome read = Apply(s, r);
      t += "; pread " + read.text + "; fstat " + Apply(s, f).text;
      return {t, read.data};
    }
    case kFsync:
      return {Rc(op.flags ? fdatasync(fd) : fsync(fd))};
    case kDropCache: {  // the file's pages leave the page cache: the next reads go to the daemon
      std::string t = Rc(fdatasync(fd));
      int e = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
      return {t == "ok" && e == 0 ? "ok" : "fdatasync " + t + "; fadvise " + (e ? Err(e) : "ok")};
    }
    case kReaddir:
      return ReadDirOutcome(s, op.p1);
    case kStat: {
      struct stat st {};
      long rc = op.nofollow ? lstat(p1.c_str(), &st) : stat(p1.c_str(), &st);
      std::string t = Rc(rc);
      return {rc == 0 ? t + " " + StatText(st) : t};
    }
    case kFstat: {
      struct stat st {};
      long rc = fstat(fd, &st);
      std::string t = Rc(rc);
      return {rc == 0 ? t + " " + StatText(st) : t};
    }
    default:
      return {"?"};
  }
}

}  // namespace archil::testing::mount_diff
