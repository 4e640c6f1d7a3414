#include "io/posix_env.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>

namespace archil::io {

namespace {

Status Err(std::string_view what, const std::string& path) {
  return Status::FromErrno(errno, std::string(what) + " " + path);
}

class PosixFile final : public File {
 public:
  PosixFile(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  ~PosixFile() override { (void)Close(); }

  Result<size_t> Pread(uint64_t offset, size_t n, char* buf) override {
    size_t done = 0;
    while (done < n) {
      ssize_t r = ::pread(fd_, buf + done, n - done, static_cast<off_t>(offset + done));
      if (r < 0) {
        if (errno == EINTR) continue;
        return Err("pread", path_);
      }
      if (r == 0) break;
      done += static_cast<size_t>(r);
    }
    return done;
  }

  Status Pwrite(uint64_t offset, std::string_view data) override {
    size_t done = 0;
    while (done < data.size()) {
      ssize_t r =
          ::pwrite(fd_, data.data() + done, data.size() - done, static_cast<off_t>(offset + done));
      if (r < 0) {
        if (errno == EINTR) continue;
        return Err("pwrite", path_);
      }
      done += static_cast<size_t>(r);
    }
    return Status::Ok();
  }

  Status Sync() override {
    while (::fdatasync(fd_) != 0) {
      if (errno != EINTR) return Err("fdatasync", path_);
    }
    return Status::Ok();
  }

  void StartWriteback(uint64_t offset, uint64_t len) override {
    // Best effort: an error here (EIO, ENOSPC) shows again at the Sync that matters.
    (void)::sync_file_range(fd_, static_cast<off64_t>(offset), static_cast<off64_t>(len),
                            SYNC_FILE_RANGE_WRITE);
  }

  Result<uint64_t> Size() override {
    struct stat st;
    if (::fstat(fd_, &st) != 0) return Err("fstat", path_);
    return static_cast<uint64_t>(st.st_size);
  }

  Status Truncate(uint64_t size) override {
    while (::ftruncate(fd_, static_cast<off_t>(size)) != 0) {
      if (errno != EINTR) return Err("ftruncate", path_);
    }
    return Status::Ok();
  }

  Status Allocate(uint64_t offset, uint64_t len, bool keep_size) override {
    return Fallocate(keep_size ? FALLOC_FL_KEEP_SIZE : 0, offset, len, "fallocate");
  }

  Status PunchHole(uint64_t offset, uint64_t len) override {
    return Fallocate(FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, offset, len, "punch hole");
  }

  Status Close() override {
    if (fd_ < 0) return Status::Ok();
    int fd = fd_;
    fd_ = -1;
    // close(2) must not be retried on EINTR on Linux: the descriptor is released either way.
    if (::close(fd) != 0 && errno != EINTR) return Err("close", path_);
    return Status::Ok();
  }

 private:
  Status Fallocate(int mode, uint64_t offset, uint64_t len, std::string_view what) {
    while (::fallocate(fd_, mode, static_cast<off_t>(offset), static_cast<off_t>(len)) != 0) {
      if (errno != EINTR) return Err(what, path_);
    }
    return Status::Ok();
  }

  int fd_;
  const std::string path_;
};

class PosixLock final : public FileLock {
 public:
  explicit PosixLock(int fd) : fd(fd) {}
  ~PosixLock() override {
    if (fd >= 0) ::close(fd);
  }
  int fd;
};

int OpenRetry(const char* path, int flags, mode_t mode) {
  int fd;
  do {
    fd = ::open(path, flags | O_CLOEXEC, mode);
  } while (fd < 0 && errno == EINTR);
  return fd;
}

class PosixEnvImpl final : public Env {
 public:
  Result<std::unique_ptr<File>> OpenFile(const std::string& path,
                                         const OpenOptions& options) override {
    int flags = options.read_only ? O_RDONLY : O_RDWR;
    if (options.create) flags |= O_CREAT;
    if (options.exclusive) flags |= O_EXCL;
    if (options.truncate) flags |= O_TRUNC;
    if (options.direct) flags |= O_DIRECT;
    int fd = OpenRetry(path.c_str(), flags, options.mode);
    if (fd < 0) return Err("open", path);
    struct stat st;
    if (::fstat(fd, &st) != 0) {
      Status s = Err("fstat", path);
      ::close(fd);
      return s;
    }
    if (!S_ISREG(st.st_mode)) {
      ::close(fd);
      return Status::FromErrno(S_ISDIR(st.st_mode) ? EISDIR : EINVAL, "open " + path);
    }
    return std::unique_ptr<File>(new PosixFile(fd, path));
  }

  Status CreateDir(const std::string& path) override {
    if (::mkdir(path.c_str(), 0755) != 0) return Err("mkdir", path);
    return Status::Ok();
  }

  Status RemoveDir(const std::string& path) override {
    if (::rmdir(path.c_str()) != 0) return Err("rmdir", path);
    return Status::Ok();
  }

  Status SyncDir(const std::string& path) override {
    int fd = OpenRetry(path.c_str(), O_RDONLY | O_DIRECTORY, 0);
    if (fd < 0) return Err("open dir", path);
    Status s;
    while (::fsync(fd) != 0) {
      if (errno != EINTR) {
        s = Err("fsync dir", path);
        break;
      }
    }
    ::close(fd);
    return s;
  }

  Status Rename(const std::string& from, const std::string& to) override {
    if (::renameat(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str()) != 0) {
      return Err("rename " + from + " to", to);
    }
    return Status::Ok();
  }

  Status Link(const std::string& from, const std::string& to) override {
    if (::linkat(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), 0) != 0) {
      return Err("link " + from + " to", to);
    }
    return Status::Ok();
  }

  Status Unlink(const std::string& path) override {
    if (::unlink(path.c_str()) != 0) return Err("unlink", path);
    return Status::Ok();
  }

  Result<std::vector<std::string>> ListDir(const std::string& path) override {
    int fd = OpenRetry(path.c_str(), O_RDONLY | O_DIRECTORY, 0);
    if (fd < 0) return Err("open dir", path);
    DIR* dir = ::fdopendir(fd);
    if (dir == nullptr) {
      Status s = Err("fdopendir", path);
      ::close(fd);
      return s;
    }
    std::vector<std::string> names;
    errno = 0;
    while (struct dirent* e = ::readdir(dir)) {
      std::string_view name(e->d_name);
      if (name != "." && name != "..") names.emplace_back(name);
      errno = 0;
    }
    Status s = errno != 0 ? Err("readdir", path) : Status::Ok();
    ::closedir(dir);
    if (!s.ok()) return s;
    return names;
  }

  Result<FileInfo> Stat(const std::string& path) override {
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) return Err("stat", path);
    FileInfo info;
    info.type = S_ISREG(st.st_mode)   ? FileType::kRegular
                : S_ISDIR(st.st_mode) ? FileType::kDirectory
                                      : FileType::kOther;
    info.size = static_cast<uint64_t>(st.st_size);
    info.mtime_micros =
        static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000 + st.st_mtim.tv_nsec / 1000;
    info.nlink = st.st_nlink;
    return info;
  }

  Result<SpaceInfo> Space(const std::string& path) override {
    struct statvfs v;
    if (::statvfs(path.c_str(), &v) != 0) return Status::FromErrno(errno, "statvfs " + path);
    return SpaceInfo{uint64_t{v.f_blocks} * v.f_frsize, uint64_t{v.f_bavail} * v.f_frsize};
  }

  Result<bool> FileExists(const std::string& path) override {
    if (::access(path.c_str(), F_OK) == 0) return true;
    if (errno == ENOENT) return false;
    return Err("access", path);
  }

  Result<uint64_t> FileSize(const std::string& path) override {
    ARCHIL_ASSIGN_OR_RETURN(FileInfo info, Stat(path));
    return info.size;
  }

  Result<std::unique_ptr<FileLock>> LockFile(const std::string& path) override {
    int fd = OpenRetry(path.c_str(), O_RDWR | O_CREAT, 0644);
    if (fd < 0) return Err("open lock file", path);
    // flock locks belong to the open file description, so a second LockFile in this process
    // conflicts too (fcntl locks would not).
    while (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      if (errno == EINTR) continue;
      Status s = Err("flock", path);
      ::close(fd);
      return s;
    }
    return std::unique_ptr<FileLock>(new PosixLock(fd));
  }

  Status UnlockFile(std::unique_ptr<FileLock> lock) override {
    auto* l = static_cast<PosixLock*>(lock.get());
    if (::flock(l->fd, LOCK_UN) != 0) return Status::FromErrno(errno, "unlock");
    return Status::Ok();  // the destructor closes the descriptor
  }
};

}  // namespace

Env* PosixEnv() {
  static Env* env = new PosixEnvImpl();
  return env;
}

}  // namespace archil::io
