#include "tier/segment_uploader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>

#include "base/crc32c.h"
#include "base/log.h"

namespace archil::tier {
namespace {

constexpr uint64_t kCompareRange = uint64_t{8} << 20;

// CRC-32C of the file's first `size` bytes, read in kCompareRange pieces.
Result<uint32_t> FileCrc(const std::string& path, uint64_t size) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::FromErrno(errno, "open " + path);
  std::string buf(kCompareRange, '\0');
  uint32_t crc = 0;
  Status s;
  for (uint64_t off = 0; off < size && s.ok();) {
    const size_t want = static_cast<size_t>(std::min<uint64_t>(kCompareRange, size - off));
    const ssize_t n = pread(fd, buf.data(), want, static_cast<off_t>(off));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      s = n < 0 ? Status::FromErrno(errno, "read " + path)
                : Status::IoError(path + " is shorter than its " + std::to_string(size) + " bytes");
      break;
    }
    crc = Crc32cExtend(crc, buf.data(), static_cast<size_t>(n));
    off += static_cast<uint64_t>(n);
  }
  close(fd);
  if (!s.ok()) return s;
  return crc;
}

}  // namespace

SegmentUploader::SegmentUploader(const SegmentUploaderOptions& options)
    : options_(options), loop_("segment upload", options.interval_ms, [this] { return Pass(); }) {}

std::string SegmentUploader::ObjectKey(engine::DiskNo root, engine::DiskNo disk,
                                       engine::SegNo seg) {
  char no[17];
  std::snprintf(no, sizeof no, "%016" PRIx64, seg.value());
  return ObjectPrefix(root, disk) + no;
}

std::string SegmentUploader::ObjectPrefix(engine::DiskNo root, engine::DiskNo disk) {
  return "lineages/" + engine::DiskIdFromNo(root).str() + "/seg/" +
         engine::DiskIdFromNo(disk).str() + "/";
}

Status SegmentUploader::CompareStored(const std::string& key, const std::string& path,
                                      uint64_t size) {
  ARCHIL_ASSIGN_OR_RETURN(store::ObjectInfo info, options_.store->Head(key));
  if (info.size != size) {
    return Status::Corruption("object " + key + " holds " + std::to_string(info.size) +
                              " bytes where segment file " + path + " holds " +
                              std::to_string(size));
  }
  ARCHIL_ASSIGN_OR_RETURN(uint32_t local, FileCrc(path, size));
  uint32_t stored = 0;
  for (uint64_t off = 0; off < size; off += kCompareRange) {
    ARCHIL_ASSIGN_OR_RETURN(std::string piece, options_.store->Get(key, off, kCompareRange));
    stored = Crc32cExtend(stored, piece.data(), piece.size());
  }
  if (stored != local) {
    return Status::Corruption("object " + key + " differs from segment file " + path +
                              ": another writer stored this name");
  }
  return Status::Ok();
}

Status SegmentUploader::UploadOne(const engine::SealedSegment& s, uint64_t* bytes) {
  struct stat st;
  if (stat(s.path.c_str(), &st) != 0) {
    if (errno != ENOENT) return Status::FromErrno(errno, "stat " + s.path);
    // Gone with its disk (a purge); a SEG record still there and no file is the engine's bug.
    Result<engine::LineageInfo> l = options_.engine->Lineage(s.disk);
    if (!l.ok() && l.status().code() == Status::Code::kNotFound) return Status::Ok();
    return Status::Internal("sealed segment file " + s.path + " is missing");
  }
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  *bytes = size;
  const std::string key = ObjectKey(s.root, s.disk, s.seg);
  bool linked = false, adopted = false;
  Result<store::ObjectStore::FileUpload> up = options_.store->PutFile(key, s.path, size);
  if (up.ok()) {
    linked = up->linked;
  } else if (up.status().code() == Status::Code::kAlreadyExists) {
    ARCHIL_RETURN_IF_ERROR(CompareStored(key, s.path, size));
    adopted = true;
    linked = options_.store->HoldsFile(key, s.path);  // an earlier link of this very file
  } else {
    return up.status().WithContext("upload " + key);
  }
  Status marked = options_.engine->SegmentUploaded(s.disk, s.seg, linked);
  if (marked.code() == Status::Code::kNotFound) return Status::Ok();  // purged meanwhile
  ARCHIL_RETURN_IF_ERROR(marked);
  MutexLock lock(&mu_);
  ++stats_.uploaded_segments;
  stats_.uploaded_bytes += size;
  if (linked) ++stats_.linked_segments;
  if (adopted) ++stats_.adopted_segments;
  return Status::Ok();
}

Status SegmentUploader::Pass() {
  ARCHIL_ASSIGN_OR_RETURN(std::vector<engine::SealedSegment> sealed,
                          options_.engine->SealedSegments());
  std::set<uint64_t> stopped;
  {
    MutexLock lock(&mu_);
    stopped = stats_.stopped_disks;
  }
  // A store error ends the pass (the rest waits, in seal order); a mismatch stops only its disk.
  Status first;
  bool store_failed = false;
  uint64_t pending = 0, pending_bytes = 0;
  int64_t oldest = 0;
  for (const engine::SealedSegment& s : sealed) {
    uint64_t bytes = 0;
    if (!store_failed && !stopped.count(s.disk.value())) {
      Status one = UploadOne(s, &bytes);
      if (one.ok()) continue;
      if (one.code() == Status::Code::kCorruption) {
        ARCHIL_LOG(kError) << "tier: uploads of " << engine::DiskIdFromNo(s.disk).str()
                           << " stop: " << one.ToString();
        stopped.insert(s.disk.value());
      } else {
        store_failed = true;
      }
      if (first.ok()) first = one;
    }
    struct stat st;
    if (bytes == 0 && stat(s.path.c_str(), &st) == 0) bytes = static_cast<uint64_t>(st.st_size);
    ++pending;
    pending_bytes += bytes;
    if (oldest == 0 || s.sealed_ns < oldest) oldest = s.sealed_ns;
  }
  MutexLock lock(&mu_);
  stats_.stopped_disks.insert(stopped.begin(), stopped.end());
  stats_.pending_segments = pending;
  stats_.pending_bytes = pending_bytes;
  stats_.oldest_pending_sealed_ns = oldest;
  if (!first.ok()) {
    ++stats_.failed_passes;
    stats_.last_error = first.ToString();
  } else {
    stats_.last_error.clear();
  }
  return first;
}

SegmentUploaderStats SegmentUploader::stats() const {
  MutexLock lock(&mu_);
  return stats_;
}

}  // namespace archil::tier
