#include "tier/segment_uploader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <thread>
#include <vector>

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

Status SegmentUploader::UploadOne(const engine::SealedSegment& s, uint64_t size) {
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
  const std::set<uint64_t> stopped_before = stopped;
  // Per segment, filled before the uploads start or by the one worker that takes it (each index
  // is touched by one thread, and read after the join).
  enum Fate : char { kWaits, kGone, kUploaded };
  std::vector<Fate> fate(sealed.size(), kWaits);
  std::vector<uint64_t> sizes(sealed.size(), 0);
  std::vector<Status> outcome(sealed.size());
  std::map<uint64_t, DiskBacklog> waiting;
  for (size_t i = 0; i < sealed.size(); ++i) {
    const engine::SealedSegment& s = sealed[i];
    struct stat st;
    if (stat(s.path.c_str(), &st) == 0) {
      sizes[i] = static_cast<uint64_t>(st.st_size);
    } else if (errno != ENOENT) {
      outcome[i] = Status::FromErrno(errno, "stat " + s.path);
    } else {
      // Gone with its disk (a purge); a SEG record still there and no file is the engine's bug.
      Result<engine::LineageInfo> l = options_.engine->Lineage(s.disk);
      if (!l.ok() && l.status().code() == Status::Code::kNotFound) {
        fate[i] = kGone;
        continue;
      }
      outcome[i] = Status::Internal("sealed segment file " + s.path + " is missing");
    }
    DiskBacklog& b = waiting[s.disk.value()];
    ++b.segments;
    b.bytes += sizes[i];
    if (b.oldest_sealed_ns == 0 || s.sealed_ns < b.oldest_sealed_ns) {
      b.oldest_sealed_ns = s.sealed_ns;
    }
  }
  {
    MutexLock lock(&mu_);
    stats_.waiting = waiting;
  }

  // Up to `parallel` uploads at once, started in seal order; after a store error none starts.
  const auto began = std::chrono::steady_clock::now();
  std::atomic<size_t> next{0};
  std::atomic<bool> store_failed{false};
  std::atomic<uint64_t> pass_bytes{0};
  // A disk stopped by a mismatch in this pass starts no further upload.
  Mutex stop_mu;
  auto is_stopped = [&](engine::DiskNo d) {
    MutexLock lock(&stop_mu);
    return stopped.count(d.value()) > 0;
  };
  auto work = [&] {
    for (size_t i = next++; i < sealed.size() && !store_failed; i = next++) {
      const engine::SealedSegment& s = sealed[i];
      if (fate[i] != kWaits || !outcome[i].ok() || is_stopped(s.disk)) continue;
      Status one = UploadOne(s, sizes[i]);
      if (!one.ok()) {
        outcome[i] = one;
        if (one.code() != Status::Code::kCorruption) {
          store_failed = true;
        } else {
          MutexLock lock(&stop_mu);
          stopped.insert(s.disk.value());
        }
        continue;
      }
      fate[i] = kUploaded;
      pass_bytes += sizes[i];
      MutexLock lock(&mu_);
      DiskBacklog& b = stats_.waiting[s.disk.value()];
      b.segments -= std::min<uint64_t>(b.segments, 1);
      b.bytes -= std::min(b.bytes, sizes[i]);
    }
  };
  const size_t width =
      std::min<size_t>(static_cast<size_t>(std::max(options_.parallel, 1)), sealed.size());
  std::vector<std::thread> helpers;
  for (size_t t = 1; t < width; ++t) helpers.emplace_back(work);
  work();
  for (std::thread& t : helpers) t.join();
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();

  // What is left, in seal order, and the first error; a mismatch stops only its disk.
  Status first;
  uint64_t pending = 0, pending_bytes = 0;
  int64_t oldest = 0;
  std::map<uint64_t, DiskBacklog> left;
  std::map<uint64_t, std::string> stops;
  for (size_t i = 0; i < sealed.size(); ++i) {
    const engine::SealedSegment& s = sealed[i];
    if (fate[i] != kWaits) continue;
    if (outcome[i].code() == Status::Code::kCorruption && !stopped_before.count(s.disk.value())) {
      ARCHIL_LOG(kError) << "tier: uploads of " << engine::DiskIdFromNo(s.disk).str()
                         << " stop: " << outcome[i].ToString();
      stops.emplace(s.disk.value(), outcome[i].ToString());
    }
    if (!outcome[i].ok() && first.ok()) first = outcome[i];
    ++pending;
    pending_bytes += sizes[i];
    if (oldest == 0 || s.sealed_ns < oldest) oldest = s.sealed_ns;
    DiskBacklog& b = left[s.disk.value()];
    ++b.segments;
    b.bytes += sizes[i];
    if (b.oldest_sealed_ns == 0 || s.sealed_ns < b.oldest_sealed_ns) {
      b.oldest_sealed_ns = s.sealed_ns;
    }
  }
  {
    MutexLock lock(&mu_);
    for (auto& [disk, why] : stops) {
      stats_.stopped_disks.insert(disk);
      stats_.stop_reasons.emplace(disk, why);
    }
    stats_.pending_segments = pending;
    stats_.pending_bytes = pending_bytes;
    stats_.oldest_pending_sealed_ns = oldest;
    stats_.waiting = std::move(left);
    if (pass_bytes > 0 && secs > 0) {
      stats_.bytes_per_second = static_cast<uint64_t>(static_cast<double>(pass_bytes) / secs);
    }
    if (!first.ok()) {
      ++stats_.failed_passes;
      stats_.last_error = first.ToString();
    } else {
      stats_.last_error.clear();
    }
  }
  if (pass_bytes > 0 && options_.on_uploaded) options_.on_uploaded();
  return first;
}

SegmentUploaderStats SegmentUploader::stats() const {
  MutexLock lock(&mu_);
  return stats_;
}

DiskBacklog SegmentUploader::Waiting(engine::DiskNo disk, std::string* stop_reason) const {
  MutexLock lock(&mu_);
  if (stop_reason != nullptr) {
    auto s = stats_.stop_reasons.find(disk.value());
    *stop_reason = s == stats_.stop_reasons.end() ? std::string() : s->second;
  }
  auto it = stats_.waiting.find(disk.value());
  return it == stats_.waiting.end() ? DiskBacklog{} : it->second;
}

}  // namespace archil::tier
