#include "store/dir_store.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "base/random.h"

namespace archil::store {
namespace {

constexpr std::string_view kTmp = ".archil-tmp";

std::string Etag(const struct stat& st) {
  return std::to_string(st.st_ino) + "-" + std::to_string(st.st_size) + "-" +
         std::to_string(static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec);
}

Status SyncDir(const std::string& dir) {
  const int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Status::FromErrno(errno, "open " + dir);
  const int rc = fsync(fd);
  const int err = errno;
  close(fd);
  return rc == 0 ? Status::Ok() : Status::FromErrno(err, "fsync " + dir);
}

Status WriteAll(int fd, std::string_view data, const std::string& what) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::FromErrno(errno, "write " + what);
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

std::string Dirname(const std::string& path) { return path.substr(0, path.rfind('/')); }

// Every key under `dir` (relative to `root`), recursively, skipping the temporary directory.
Status Walk(const std::string& root, const std::string& rel, std::vector<std::string>* out) {
  const std::string dir = rel.empty() ? root : root + "/" + rel;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) {
    if (errno == ENOENT || errno == ENOTDIR) return Status::Ok();
    return Status::FromErrno(errno, "list " + dir);
  }
  Status status;
  while (dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name == "." || name == ".." || (rel.empty() && name == kTmp)) continue;
    const std::string child = rel.empty() ? name : rel + "/" + name;
    unsigned char type = e->d_type;
    if (type == DT_UNKNOWN) {
      struct stat st;
      if (lstat((root + "/" + child).c_str(), &st) != 0) continue;
      type = S_ISDIR(st.st_mode) ? DT_DIR : S_ISREG(st.st_mode) ? DT_REG : DT_UNKNOWN;
    }
    if (type == DT_DIR) {
      status = Walk(root, child, out);
      if (!status.ok()) break;
    } else if (type == DT_REG) {
      out->push_back(child);
    }
  }
  closedir(d);
  return status;
}

// Holds an exclusive flock(2) of the store's lock file for its lifetime. flock's lock belongs to
// the open file description, which every thread of the process shares: it excludes other
// processes only, so callers also hold DirStore::names_mu_.
class NameLock {
 public:
  NameLock(int fd, const std::string& root) : fd_(fd) {
    if (flock(fd_, LOCK_EX) != 0) status_ = Status::FromErrno(errno, "lock " + root);
  }
  ~NameLock() {
    if (status_.ok()) flock(fd_, LOCK_UN);
  }
  NameLock(const NameLock&) = delete;
  NameLock& operator=(const NameLock&) = delete;
  const Status& status() const { return status_; }

 private:
  const int fd_;
  Status status_;
};

}  // namespace

Result<std::unique_ptr<DirStore>> DirStore::Open(const std::string& path) {
  if (path.empty() || path.front() != '/') {
    return Status::InvalidArgument("dir:// store path '" + path + "' is not absolute");
  }
  std::string root = path;
  while (root.size() > 1 && root.back() == '/') root.pop_back();
  // mkdir -p, fsyncing each new directory's parent.
  for (size_t pos = 1; pos <= root.size(); ++pos) {
    if (pos != root.size() && root[pos] != '/') continue;
    const std::string dir = root.substr(0, pos);
    if (mkdir(dir.c_str(), 0700) == 0) {
      ARCHIL_RETURN_IF_ERROR(SyncDir(Dirname(dir).empty() ? "/" : Dirname(dir)));
    } else if (errno != EEXIST) {
      return Status::FromErrno(errno, "create object directory " + dir);
    }
  }
  const std::string tmp = root + "/" + std::string(kTmp);
  if (mkdir(tmp.c_str(), 0700) != 0 && errno != EEXIST) {
    return Status::FromErrno(errno, "create " + tmp);
  }
  if (DIR* d = opendir(tmp.c_str())) {
    while (dirent* e = readdir(d)) {
      const std::string name = e->d_name;
      if (name.rfind("t.", 0) == 0) unlink((tmp + "/" + name).c_str());
    }
    closedir(d);
  }
  const int lock_fd = open((tmp + "/lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (lock_fd < 0) return Status::FromErrno(errno, "open " + tmp + "/lock");
  return std::unique_ptr<DirStore>(new DirStore(root, lock_fd));
}

DirStore::~DirStore() { close(lock_fd_); }

Status DirStore::CheckKey(std::string_view key) const {
  ARCHIL_RETURN_IF_ERROR(ValidateKey(key));
  if (key == kTmp || key.rfind(std::string(kTmp) + "/", 0) == 0) {
    return Status::InvalidArgument("object key '" + std::string(key) +
                                   "' is in the store's temporary directory");
  }
  return Status::Ok();
}

Status DirStore::MakeParents(std::string_view key) {
  for (size_t pos = key.find('/'); pos != std::string_view::npos; pos = key.find('/', pos + 1)) {
    const std::string dir = root_ + "/" + std::string(key.substr(0, pos));
    if (mkdir(dir.c_str(), 0700) == 0) {
      ARCHIL_RETURN_IF_ERROR(SyncDir(Dirname(dir)));
    } else if (errno != EEXIST) {
      return Status::FromErrno(errno, "create " + dir);
    }
  }
  return Status::Ok();
}

Status DirStore::SyncParent(std::string_view key) {
  return SyncDir(Dirname(root_ + "/" + std::string(key)));
}

Result<std::string> DirStore::WriteTemp(std::string_view data) {
  ARCHIL_ASSIGN_OR_RETURN(std::string id, SecureRandomHex(8));
  const std::string tmp = root_ + "/" + std::string(kTmp) + "/t." + id;
  const int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return Status::FromErrno(errno, "create " + tmp);
  Status s = WriteAll(fd, data, tmp);
  if (s.ok() && fdatasync(fd) != 0) s = Status::FromErrno(errno, "fsync " + tmp);
  close(fd);
  if (!s.ok()) {
    unlink(tmp.c_str());
    return s;
  }
  return tmp;
}

Result<std::string> DirStore::CopyTemp(const std::string& src, uint64_t size) {
  ARCHIL_ASSIGN_OR_RETURN(std::string id, SecureRandomHex(8));
  const std::string tmp = root_ + "/" + std::string(kTmp) + "/t." + id;
  const int in = open(src.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) return Status::FromErrno(errno, "open " + src);
  const int out = open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (out < 0) {
    close(in);
    return Status::FromErrno(errno, "create " + tmp);
  }
  Status s;
  loff_t in_off = 0, out_off = 0;
  while (s.ok() && static_cast<uint64_t>(in_off) < size) {
    ssize_t n =
        copy_file_range(in, &in_off, out, &out_off, size - static_cast<uint64_t>(in_off), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) s = Status::FromErrno(errno, "copy " + src);
    if (n == 0) s = Status::IoError("copy " + src + ": the file is shorter than its size");
  }
  if (s.ok() && fdatasync(out) != 0) s = Status::FromErrno(errno, "fsync " + tmp);
  close(in);
  close(out);
  if (!s.ok()) {
    unlink(tmp.c_str());
    return s;
  }
  return tmp;
}

Result<std::string> DirStore::Put(std::string_view key, std::string_view data,
                                  const PutOptions& options) {
  ARCHIL_RETURN_IF_ERROR(CheckKey(key));
  ARCHIL_RETURN_IF_ERROR(MakeParents(key));
  ARCHIL_ASSIGN_OR_RETURN(std::string tmp, WriteTemp(data));
  const std::string dst = root_ + "/" + std::string(key);
  struct stat st;
  Status s;
  if (options.condition == Condition::kIfAbsent) {
    if (link(tmp.c_str(), dst.c_str()) != 0) {
      s = errno == EEXIST ? Status::AlreadyExists("object " + std::string(key) + " exists")
                          : Status::FromErrno(errno, "link " + dst);
    }
    unlink(tmp.c_str());
  } else {
    MutexLock names(&names_mu_);
    NameLock lock(lock_fd_, root_);
    s = lock.status();
    if (s.ok() && options.condition == Condition::kIfMatch) {
      if (stat(dst.c_str(), &st) != 0 || Etag(st) != options.etag) {
        s = Status::FailedPrecondition("object " + std::string(key) + " is not the one with etag " +
                                       options.etag);
      }
    }
    if (s.ok() && rename(tmp.c_str(), dst.c_str()) != 0)
      s = Status::FromErrno(errno, "rename " + dst);
    if (!s.ok()) unlink(tmp.c_str());
  }
  ARCHIL_RETURN_IF_ERROR(s);
  ARCHIL_RETURN_IF_ERROR(SyncParent(key));
  if (stat(dst.c_str(), &st) != 0) return Status::FromErrno(errno, "stat " + dst);
  return Etag(st);
}

Result<ObjectStore::FileUpload> DirStore::PutFile(std::string_view key, const std::string& path,
                                                  uint64_t size) {
  ARCHIL_RETURN_IF_ERROR(CheckKey(key));
  ARCHIL_RETURN_IF_ERROR(MakeParents(key));
  const std::string dst = root_ + "/" + std::string(key);
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return Status::FromErrno(errno, "stat " + path);
  FileUpload up;
  // Linking shares the file; only a file of exactly `size` bytes may be shared.
  if (static_cast<uint64_t>(st.st_size) == size) {
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return Status::FromErrno(errno, "open " + path);
    const int rc = fdatasync(fd);
    const int err = errno;
    close(fd);
    if (rc != 0) return Status::FromErrno(err, "fsync " + path);
    if (link(path.c_str(), dst.c_str()) == 0) {
      up.linked = true;
    } else if (errno == EEXIST) {
      return Status::AlreadyExists("object " + std::string(key) + " exists");
    } else if (errno != EXDEV && errno != EPERM) {
      return Status::FromErrno(errno, "link " + path + " to " + dst);
    }
  }
  if (!up.linked) {
    ARCHIL_ASSIGN_OR_RETURN(std::string tmp, CopyTemp(path, size));
    const int rc = link(tmp.c_str(), dst.c_str());
    const int err = errno;
    unlink(tmp.c_str());
    if (rc != 0) {
      return err == EEXIST ? Status::AlreadyExists("object " + std::string(key) + " exists")
                           : Status::FromErrno(err, "link " + dst);
    }
  }
  ARCHIL_RETURN_IF_ERROR(SyncParent(key));
  if (stat(dst.c_str(), &st) != 0) return Status::FromErrno(errno, "stat " + dst);
  up.etag = Etag(st);
  return up;
}

Result<std::string> DirStore::Get(std::string_view key, uint64_t offset, uint64_t length) {
  ARCHIL_RETURN_IF_ERROR(CheckKey(key));
  const std::string path = root_ + "/" + std::string(key);
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT || errno == ENOTDIR || errno == EISDIR) {
      return Status::NotFound("no object " + std::string(key));
    }
    return Status::FromErrno(errno, "open " + path);
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return Status::NotFound("no object " + std::string(key));
  }
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  std::string out;
  if (offset < size) {
    out.resize(std::min(length, size - offset));
    size_t done = 0;
    while (done < out.size()) {
      ssize_t n =
          pread(fd, out.data() + done, out.size() - done, static_cast<off_t>(offset + done));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        const int err = n < 0 ? errno : EIO;
        close(fd);
        return Status::FromErrno(err, "read " + path);
      }
      done += static_cast<size_t>(n);
    }
  }
  close(fd);
  return out;
}

Result<ObjectInfo> DirStore::Head(std::string_view key) {
  ARCHIL_RETURN_IF_ERROR(CheckKey(key));
  struct stat st;
  const std::string path = root_ + "/" + std::string(key);
  if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
    if (errno == ENOENT || errno == ENOTDIR || S_ISDIR(st.st_mode)) {
      return Status::NotFound("no object " + std::string(key));
    }
    return Status::FromErrno(errno, "stat " + path);
  }
  return ObjectInfo{std::string(key), static_cast<uint64_t>(st.st_size), Etag(st)};
}

Result<ListPage> DirStore::List(std::string_view prefix, std::string_view start_after,
                                size_t limit) {
  ARCHIL_RETURN_IF_ERROR(ValidatePrefix(prefix));
  if (limit < 1 || limit > 1000) return Status::InvalidArgument("list limit must be 1..1000");
  // Walk only the deepest directory the prefix names entirely.
  const size_t slash = prefix.rfind('/');
  const std::string base =
      slash == std::string_view::npos ? "" : std::string(prefix.substr(0, slash));
  std::vector<std::string> keys;
  if (base == kTmp || base.rfind(std::string(kTmp) + "/", 0) == 0) return ListPage{};
  ARCHIL_RETURN_IF_ERROR(Walk(root_, base, &keys));
  std::sort(keys.begin(), keys.end());
  ListPage page;
  for (const std::string& k : keys) {
    if (k.rfind(prefix, 0) != 0 || k <= start_after) continue;
    if (page.objects.size() == limit) {
      page.truncated = true;
      break;
    }
    struct stat st;
    if (stat((root_ + "/" + k).c_str(), &st) != 0) continue;  // deleted meanwhile
    page.objects.push_back({k, static_cast<uint64_t>(st.st_size), Etag(st)});
  }
  return page;
}

bool DirStore::HoldsFile(std::string_view key, const std::string& path) {
  if (!CheckKey(key).ok()) return false;
  struct stat obj, file;
  return stat((root_ + "/" + std::string(key)).c_str(), &obj) == 0 &&
         stat(path.c_str(), &file) == 0 && obj.st_ino == file.st_ino && obj.st_dev == file.st_dev;
}

Status DirStore::Delete(std::string_view key) {
  ARCHIL_RETURN_IF_ERROR(CheckKey(key));
  const std::string path = root_ + "/" + std::string(key);
  {
    MutexLock names(&names_mu_);
    NameLock lock(lock_fd_, root_);
    ARCHIL_RETURN_IF_ERROR(lock.status());
    if (unlink(path.c_str()) != 0) {
      if (errno == ENOENT || errno == ENOTDIR) return Status::Ok();
      return Status::FromErrno(errno, "remove " + path);
    }
  }
  return SyncParent(key);
}

}  // namespace archil::store
