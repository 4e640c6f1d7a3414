#include "io/rocksdb_fs.h"

#include <rocksdb/system_clock.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cstdio>

namespace archil::io {

using rocksdb::FileOptions;
using rocksdb::IODebugContext;
using rocksdb::IOOptions;
using rocksdb::IOStatus;
using rocksdb::Slice;

IOStatus ToIOStatus(const Status& s) {
  if (s.ok()) return IOStatus::OK();
  switch (ErrnoFor(s)) {
    case ENOSPC:
    case EDQUOT: {
      // As RocksDB's own PosixFileSystem: space may come back, so the DB may resume.
      IOStatus no_space = IOStatus::NoSpace(s.message());
      no_space.SetRetryable(true);
      return no_space;
    }
    case ENOENT:
      return IOStatus::PathNotFound(s.message());
    default:
      return IOStatus::IOError(s.message());
  }
}

namespace {

class SequentialFile final : public rocksdb::FSSequentialFile {
 public:
  explicit SequentialFile(std::unique_ptr<File> file) : file_(std::move(file)) {}

  IOStatus Read(size_t n, const IOOptions&, Slice* result, char* scratch,
                IODebugContext*) override {
    Result<size_t> got = file_->Pread(pos_, n, scratch);
    if (!got.ok()) return ToIOStatus(got.status());
    pos_ += *got;
    *result = Slice(scratch, *got);
    return IOStatus::OK();
  }
  IOStatus PositionedRead(uint64_t offset, size_t n, const IOOptions&, Slice* result, char* scratch,
                          IODebugContext*) override {
    Result<size_t> got = file_->Pread(offset, n, scratch);
    if (!got.ok()) return ToIOStatus(got.status());
    *result = Slice(scratch, *got);
    return IOStatus::OK();
  }
  IOStatus Skip(uint64_t n) override {
    pos_ += n;
    return IOStatus::OK();
  }

 private:
  std::unique_ptr<File> file_;
  uint64_t pos_ = 0;
};

class RandomAccessFile final : public rocksdb::FSRandomAccessFile {
 public:
  explicit RandomAccessFile(std::unique_ptr<File> file) : file_(std::move(file)) {}

  IOStatus Read(uint64_t offset, size_t n, const IOOptions&, Slice* result, char* scratch,
                IODebugContext*) const override {
    Result<size_t> got = file_->Pread(offset, n, scratch);
    if (!got.ok()) return ToIOStatus(got.status());
    *result = Slice(scratch, *got);
    return IOStatus::OK();
  }

 private:
  std::unique_ptr<File> file_;
};

class WritableFile final : public rocksdb::FSWritableFile {
 public:
  WritableFile(std::unique_ptr<File> file, uint64_t size, const FileOptions& options)
      : rocksdb::FSWritableFile(options), file_(std::move(file)), size_(size) {}
  ~WritableFile() override { (void)file_->Close(); }

  IOStatus Append(const Slice& data, const IOOptions&, IODebugContext*) override {
    Status s = file_->Pwrite(size_, std::string_view(data.data(), data.size()));
    if (!s.ok()) return ToIOStatus(s);
    size_ += data.size();
    return IOStatus::OK();
  }
  IOStatus PositionedAppend(const Slice& data, uint64_t offset, const IOOptions&,
                            IODebugContext*) override {
    Status s = file_->Pwrite(offset, std::string_view(data.data(), data.size()));
    if (!s.ok()) return ToIOStatus(s);
    size_ = std::max<uint64_t>(size_, offset + data.size());
    return IOStatus::OK();
  }
  IOStatus Truncate(uint64_t size, const IOOptions&, IODebugContext*) override {
    Status s = file_->Truncate(size);
    if (!s.ok()) return ToIOStatus(s);
    size_ = size;
    return IOStatus::OK();
  }
  IOStatus Close(const IOOptions&, IODebugContext*) override {
    // RocksDB preallocates its WAL and table files (PrepareWrite -> Allocate, up to 1.1 x the
    // write buffer): give back what was not written, as its own POSIX file does, or every file
    // keeps its preallocated tail for as long as it lives.
    size_t block_size = 0, last_block = 0;
    GetPreallocationStatus(&block_size, &last_block);
    if (last_block > 0) {
      const uint64_t end = uint64_t{block_size} * last_block;
      (void)file_->Truncate(size_);
      if (end > size_) (void)file_->PunchHole(size_, end - size_);
    }
    return ToIOStatus(file_->Close());
  }
  IOStatus Flush(const IOOptions&, IODebugContext*) override { return IOStatus::OK(); }
  IOStatus Sync(const IOOptions&, IODebugContext*) override { return ToIOStatus(file_->Sync()); }
  IOStatus Fsync(const IOOptions&, IODebugContext*) override { return ToIOStatus(file_->Sync()); }
  bool IsSyncThreadSafe() const override { return true; }
  uint64_t GetFileSize(const IOOptions&, IODebugContext*) override { return size_; }
  IOStatus Allocate(uint64_t offset, uint64_t len, const IOOptions&, IODebugContext*) override {
    return ToIOStatus(file_->Allocate(offset, len, /*keep_size=*/true));
  }

 private:
  std::unique_ptr<File> file_;
  uint64_t size_;
};

class RandomRWFile final : public rocksdb::FSRandomRWFile {
 public:
  explicit RandomRWFile(std::unique_ptr<File> file) : file_(std::move(file)) {}

  IOStatus Write(uint64_t offset, const Slice& data, const IOOptions&, IODebugContext*) override {
    return ToIOStatus(file_->Pwrite(offset, std::string_view(data.data(), data.size())));
  }
  IOStatus Read(uint64_t offset, size_t n, const IOOptions&, Slice* result, char* scratch,
                IODebugContext*) const override {
    Result<size_t> got = file_->Pread(offset, n, scratch);
    if (!got.ok()) return ToIOStatus(got.status());
    *result = Slice(scratch, *got);
    return IOStatus::OK();
  }
  IOStatus Flush(const IOOptions&, IODebugContext*) override { return IOStatus::OK(); }
  IOStatus Sync(const IOOptions&, IODebugContext*) override { return ToIOStatus(file_->Sync()); }
  IOStatus Close(const IOOptions&, IODebugContext*) override { return ToIOStatus(file_->Close()); }

 private:
  std::unique_ptr<File> file_;
};

class Directory final : public rocksdb::FSDirectory {
 public:
  Directory(Env* env, std::string path) : env_(env), path_(std::move(path)) {}
  IOStatus Fsync(const IOOptions&, IODebugContext*) override {
    return ToIOStatus(env_->SyncDir(path_));
  }
  IOStatus Close(const IOOptions&, IODebugContext*) override { return IOStatus::OK(); }

 private:
  Env* const env_;
  const std::string path_;
};

class Lock final : public rocksdb::FileLock {
 public:
  explicit Lock(std::unique_ptr<io::FileLock> lock) : lock(std::move(lock)) {}
  std::unique_ptr<io::FileLock> lock;
};

// The info log, appended to a file in the Env and never synced. Errors are dropped: logging
// must not fail the database.
class InfoLogger final : public rocksdb::Logger {
 public:
  explicit InfoLogger(std::unique_ptr<File> file)
      : rocksdb::Logger(rocksdb::InfoLogLevel::INFO_LEVEL), file_(std::move(file)) {}
  ~InfoLogger() override { (void)file_->Close(); }

  using rocksdb::Logger::Logv;
  void Logv(const char* format, va_list ap) override {
    char buf[1024];
    va_list copy;
    va_copy(copy, ap);
    int n = std::vsnprintf(buf, sizeof(buf), format, copy);
    va_end(copy);
    if (n < 0) return;
    std::string line(buf, std::min<size_t>(static_cast<size_t>(n), sizeof(buf) - 1));
    if (line.empty() || line.back() != '\n') line.push_back('\n');
    std::lock_guard<std::mutex> l(mu_);
    if (file_->Pwrite(size_, line).ok()) size_ += line.size();
  }
  // What RocksDB's log roller (max_log_file_size) reads to decide when to start a new file.
  size_t GetLogFileSize() const override {
    std::lock_guard<std::mutex> l(mu_);
    return static_cast<size_t>(size_);
  }

 private:
  mutable std::mutex mu_;
  std::unique_ptr<File> file_;
  uint64_t size_ = 0;
};

class RocksFileSystem final : public rocksdb::FileSystem {
 public:
  RocksFileSystem(Env* env, std::string test_dir) : env_(env), test_dir_(std::move(test_dir)) {}

  const char* Name() const override { return "ArchilIoFileSystem"; }

  IOStatus NewSequentialFile(const std::string& fname, const FileOptions&,
                             std::unique_ptr<rocksdb::FSSequentialFile>* result,
                             IODebugContext*) override {
    OpenOptions o;
    o.read_only = true;
    Result<std::unique_ptr<File>> f = env_->OpenFile(fname, o);
    if (!f.ok()) return ToIOStatus(f.status());
    *result = std::make_unique<SequentialFile>(std::move(f).value());
    return IOStatus::OK();
  }

  IOStatus NewRandomAccessFile(const std::string& fname, const FileOptions&,
                               std::unique_ptr<rocksdb::FSRandomAccessFile>* result,
                               IODebugContext*) override {
    OpenOptions o;
    o.read_only = true;
    Result<std::unique_ptr<File>> f = env_->OpenFile(fname, o);
    if (!f.ok()) return ToIOStatus(f.status());
    *result = std::make_unique<RandomAccessFile>(std::move(f).value());
    return IOStatus::OK();
  }

  IOStatus NewWritableFile(const std::string& fname, const FileOptions& options,
                           std::unique_ptr<rocksdb::FSWritableFile>* result,
                           IODebugContext*) override {
    return OpenWritable(fname, options, /*truncate=*/true, result);
  }

  IOStatus ReopenWritableFile(const std::string& fname, const FileOptions& options,
                              std::unique_ptr<rocksdb::FSWritableFile>* result,
                              IODebugContext*) override {
    return OpenWritable(fname, options, /*truncate=*/false, result);
  }

  IOStatus NewRandomRWFile(const std::string& fname, const FileOptions&,
                           std::unique_ptr<rocksdb::FSRandomRWFile>* result,
                           IODebugContext*) override {
    Result<std::unique_ptr<File>> f = env_->OpenFile(fname, OpenOptions());
    if (!f.ok()) return ToIOStatus(f.status());
    *result = std::make_unique<RandomRWFile>(std::move(f).value());
    return IOStatus::OK();
  }

  IOStatus NewDirectory(const std::string& name, const IOOptions&,
                        std::unique_ptr<rocksdb::FSDirectory>* result, IODebugContext*) override {
    Result<FileInfo> info = env_->Stat(name);
    if (!info.ok()) return ToIOStatus(info.status());
    if (info->type != FileType::kDirectory) return IOStatus::IOError(name + ": not a directory");
    *result = std::make_unique<Directory>(env_, name);
    return IOStatus::OK();
  }

  // What an SstFileManager reads to decide whether a compaction has room.
  IOStatus GetFreeSpace(const std::string& path, const IOOptions&, uint64_t* free,
                        IODebugContext*) override {
    Result<SpaceInfo> space = env_->Space(path);
    if (!space.ok()) return ToIOStatus(space.status());
    *free = space->free_bytes;
    return IOStatus::OK();
  }

  IOStatus FileExists(const std::string& fname, const IOOptions&, IODebugContext*) override {
    Result<bool> exists = env_->FileExists(fname);
    if (!exists.ok()) return ToIOStatus(exists.status());
    return *exists ? IOStatus::OK() : IOStatus::NotFound(fname);
    // The analyzer loses track of the message IOStatus owns inside RocksDB's header.
  }  // NOLINT(clang-analyzer-cplusplus.NewDeleteLeaks)

  IOStatus GetChildren(const std::string& dir, const IOOptions&, std::vector<std::string>* result,
                       IODebugContext*) override {
    Result<std::vector<std::string>> names = env_->ListDir(dir);
    if (!names.ok()) {
      // As RocksDB's PosixFileSystem, which callers test with IsNotFound().
      int err = ErrnoFor(names.status());
      if (err == ENOENT || err == ENOTDIR) return IOStatus::NotFound(names.status().message());
      return ToIOStatus(names.status());
    }
    *result = std::move(names).value();
    return IOStatus::OK();
  }

  IOStatus DeleteFile(const std::string& fname, const IOOptions&, IODebugContext*) override {
    return ToIOStatus(env_->Unlink(fname));
  }

  IOStatus CreateDir(const std::string& dirname, const IOOptions&, IODebugContext*) override {
    return ToIOStatus(env_->CreateDir(dirname));
  }

  IOStatus CreateDirIfMissing(const std::string& dirname, const IOOptions&,
                              IODebugContext*) override {
    Status s = env_->CreateDir(dirname);
    if (s.ok()) return IOStatus::OK();
    if (ErrnoFor(s) == EEXIST) {
      Result<FileInfo> info = env_->Stat(dirname);
      if (info.ok() && info->type == FileType::kDirectory) return IOStatus::OK();
      if (info.ok()) return IOStatus::IOError(dirname + ": exists and is not a directory");
      return ToIOStatus(info.status());
    }
    return ToIOStatus(s);
  }

  IOStatus DeleteDir(const std::string& dirname, const IOOptions&, IODebugContext*) override {
    return ToIOStatus(env_->RemoveDir(dirname));
  }

  IOStatus GetFileSize(const std::string& fname, const IOOptions&, uint64_t* size,
                       IODebugContext*) override {
    Result<uint64_t> s = env_->FileSize(fname);
    if (!s.ok()) return ToIOStatus(s.status());
    *size = *s;
    return IOStatus::OK();
  }

  IOStatus GetFileModificationTime(const std::string& fname, const IOOptions&, uint64_t* mtime,
                                   IODebugContext*) override {
    Result<FileInfo> info = env_->Stat(fname);
    if (!info.ok()) return ToIOStatus(info.status());
    *mtime = static_cast<uint64_t>(info->mtime_micros / 1000000);  // seconds, as RocksDB's own
    return IOStatus::OK();
  }

  IOStatus RenameFile(const std::string& src, const std::string& target, const IOOptions&,
                      IODebugContext*) override {
    return ToIOStatus(env_->Rename(src, target));
  }

  IOStatus LinkFile(const std::string& src, const std::string& target, const IOOptions&,
                    IODebugContext*) override {
    return ToIOStatus(env_->Link(src, target));
  }

  IOStatus NumFileLinks(const std::string& fname, const IOOptions&, uint64_t* count,
                        IODebugContext*) override {
    Result<FileInfo> info = env_->Stat(fname);
    if (!info.ok()) return ToIOStatus(info.status());
    *count = info->nlink;
    return IOStatus::OK();
  }

  IOStatus LockFile(const std::string& fname, const IOOptions&, rocksdb::FileLock** lock,
                    IODebugContext*) override {
    Result<std::unique_ptr<FileLock>> l = env_->LockFile(fname);
    if (!l.ok()) return ToIOStatus(l.status());
    *lock = new Lock(std::move(l).value());
    return IOStatus::OK();
  }

  IOStatus UnlockFile(rocksdb::FileLock* lock, const IOOptions&, IODebugContext*) override {
    std::unique_ptr<Lock> l(static_cast<Lock*>(lock));
    return ToIOStatus(env_->UnlockFile(std::move(l->lock)));
  }

  IOStatus GetTestDirectory(const IOOptions&, std::string* path, IODebugContext*) override {
    *path = test_dir_;
    return IOStatus::OK();
  }

  IOStatus NewLogger(const std::string& fname, const IOOptions&,
                     std::shared_ptr<rocksdb::Logger>* result, IODebugContext*) override {
    OpenOptions o;
    o.create = true;
    o.truncate = true;
    Result<std::unique_ptr<File>> f = env_->OpenFile(fname, o);
    if (!f.ok()) return ToIOStatus(f.status());
    *result = std::make_shared<InfoLogger>(std::move(f).value());
    return IOStatus::OK();
  }

  IOStatus GetAbsolutePath(const std::string& db_path, const IOOptions&, std::string* output,
                           IODebugContext*) override {
    if (!db_path.empty() && db_path[0] == '/') {
      *output = db_path;
      return IOStatus::OK();
    }
    char cwd[4096];
    if (::getcwd(cwd, sizeof(cwd)) == nullptr) {
      return ToIOStatus(Status::FromErrno(errno, "getcwd"));
    }
    *output = std::string(cwd) + "/" + db_path;
    return IOStatus::OK();
  }

  IOStatus IsDirectory(const std::string& path, const IOOptions&, bool* is_dir,
                       IODebugContext*) override {
    Result<FileInfo> info = env_->Stat(path);
    if (!info.ok()) return ToIOStatus(info.status());
    *is_dir = info->type == FileType::kDirectory;
    return IOStatus::OK();
  }

 private:
  IOStatus OpenWritable(const std::string& fname, const FileOptions& options, bool truncate,
                        std::unique_ptr<rocksdb::FSWritableFile>* result) {
    if (options.use_direct_writes) return IOStatus::NotSupported("direct writes");
    OpenOptions o;
    o.create = true;
    o.truncate = truncate;
    Result<std::unique_ptr<File>> f = env_->OpenFile(fname, o);
    if (!f.ok()) return ToIOStatus(f.status());
    uint64_t size = 0;
    if (!truncate) {
      Result<uint64_t> s = (*f)->Size();
      if (!s.ok()) return ToIOStatus(s.status());
      size = *s;
    }
    *result = std::make_unique<WritableFile>(std::move(f).value(), size, options);
    return IOStatus::OK();
  }

  Env* const env_;
  const std::string test_dir_;
};

}  // namespace

std::shared_ptr<rocksdb::FileSystem> NewRocksFileSystem(Env* env, std::string test_dir) {
  return std::make_shared<RocksFileSystem>(env, std::move(test_dir));
}

namespace {

class CappedSleepClock final : public rocksdb::SystemClockWrapper {
 public:
  CappedSleepClock(const std::shared_ptr<rocksdb::SystemClock>& target, int cap)
      : rocksdb::SystemClockWrapper(target), cap_(cap) {}
  const char* Name() const override { return "ArchilCappedSleepClock"; }
  void SleepForMicroseconds(int micros) override {
    rocksdb::SystemClockWrapper::SleepForMicroseconds(std::min(micros, cap_));
  }

 private:
  const int cap_;
};

class CappedSleepEnv final : public rocksdb::EnvWrapper {
 public:
  CappedSleepEnv(std::unique_ptr<rocksdb::Env> target, int cap)
      : rocksdb::EnvWrapper(std::move(target)), cap_(cap) {
    system_clock_ = std::make_shared<CappedSleepClock>(system_clock_, cap);
  }
  const char* Name() const override { return "ArchilCappedSleepEnv"; }
  void SleepForMicroseconds(int micros) override {
    rocksdb::EnvWrapper::SleepForMicroseconds(std::min(micros, cap_));
  }

 private:
  const int cap_;
};

}  // namespace

std::unique_ptr<rocksdb::Env> NewRocksEnv(Env* env, const RocksEnvOptions& options) {
  std::unique_ptr<rocksdb::Env> composite =
      rocksdb::NewCompositeEnv(NewRocksFileSystem(env, options.test_dir));
  if (options.max_sleep_micros < 0) return composite;
  return std::make_unique<CappedSleepEnv>(std::move(composite), options.max_sleep_micros);
}

}  // namespace archil::io
