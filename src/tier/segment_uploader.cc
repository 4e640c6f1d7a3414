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
#include <deque>
#include <thread>
#include <utility>
#include <vector>

#include "base/crc32c.h"
#include "base/log.h"
#include "base/thread_name.h"

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

void SegmentUploader::Kick() {
  {
    MutexLock lock(&run_mu_);
    sealed_since_listing_ = true;
  }
  run_cv_.SignalAll();
  loop_.Kick();
}

void SegmentUploader::Stop() {
  {
    MutexLock lock(&run_mu_);
    stopping_ = true;
  }
  run_cv_.SignalAll();
  loop_.Stop();
  MutexLock lock(&run_mu_);
  stopping_ = false;
}

Status SegmentUploader::Pass() {
  std::set<uint64_t> stopped;
  {
    MutexLock lock(&mu_);
    stopped = stats_.stopped_disks;
  }
  const std::set<uint64_t> stopped_before = stopped;
  const auto began = std::chrono::steady_clock::now();
  uint64_t pass_bytes = 0;

  // What this pass has taken in, in seal order. A deque: workers hold references to its items
  // while the listing appends. Every field below is read and written under run_mu_, except an
  // item's segment and size (fixed once appended) and its outcome while its one worker uploads.
  enum Fate : char { kWaits, kGone, kUploaded };
  struct Item {
    engine::SealedSegment s;
    uint64_t size = 0;
    Fate fate = kWaits;
    Status outcome;
  };
  std::deque<Item> items;
  std::set<std::pair<uint64_t, uint64_t>> taken;  // (disk, seg) of every item
  size_t next = 0;
  int busy = 0;
  bool store_failed = false, done = false;

  // Publishes what waits (every item neither uploaded nor gone), per disk and in all, to stats_.
  // REQUIRES: run_mu_ held (unchecked: the items are this pass's locals). O(items) per call, a
  // few hundred at most, against one upload of a segment per call.
  auto recount = [&] {
    std::map<uint64_t, DiskBacklog> waiting;
    uint64_t segments = 0, bytes = 0;
    int64_t oldest = 0;
    for (const Item& it : items) {
      if (it.fate != kWaits) continue;
      DiskBacklog& b = waiting[it.s.disk.value()];
      ++b.segments;
      b.bytes += it.size;
      if (b.oldest_sealed_ns == 0 || it.s.sealed_ns < b.oldest_sealed_ns) {
        b.oldest_sealed_ns = it.s.sealed_ns;
      }
      ++segments;
      bytes += it.size;
      if (oldest == 0 || it.s.sealed_ns < oldest) oldest = it.s.sealed_ns;
    }
    MutexLock stats_lock(&mu_);
    stats_.waiting = std::move(waiting);
    stats_.pending_segments = segments;
    stats_.pending_bytes = bytes;
    stats_.oldest_pending_sealed_ns = oldest;
  };

  // Lists the sealed segments and takes in those not yet taken. Ok, or the listing's error.
  // REQUIRES: run_mu_ not held.
  auto take_in = [&]() -> Status {
    ARCHIL_ASSIGN_OR_RETURN(std::vector<engine::SealedSegment> sealed,
                            options_.engine->SealedSegments());
    std::vector<Item> fresh;
    {
      MutexLock lock(&run_mu_);
      for (engine::SealedSegment& s : sealed) {
        if (!taken.emplace(s.disk.value(), s.seg.value()).second) continue;
        fresh.push_back(Item{std::move(s), 0, kWaits, Status::Ok()});
      }
    }
    for (Item& it : fresh) {
      struct stat st;
      if (stat(it.s.path.c_str(), &st) == 0) {
        it.size = static_cast<uint64_t>(st.st_size);
      } else if (errno != ENOENT) {
        it.outcome = Status::FromErrno(errno, "stat " + it.s.path);
      } else {
        // Gone with its disk (a purge); a SEG record still there and no file is the engine's bug.
        Result<engine::LineageInfo> l = options_.engine->Lineage(it.s.disk);
        if (!l.ok() && l.status().code() == Status::Code::kNotFound) {
          it.fate = kGone;
        } else {
          it.outcome = Status::Internal("sealed segment file " + it.s.path + " is missing");
        }
      }
    }
    MutexLock lock(&run_mu_);
    for (Item& it : fresh) items.push_back(std::move(it));
    recount();  // the listing saw every segment that waits
    run_cv_.SignalAll();
    return Status::Ok();
  };

  // A worker takes the next item in seal order, uploads it, and waits for more until the pass is
  // done; after a store error it takes no new item.
  auto work = [&] {
    for (;;) {
      Item* it = nullptr;
      {
        MutexLock lock(&run_mu_);
        bool skipped = false;  // items passed over: the lister may be waiting for the queue's end
        while (it == nullptr) {
          if (done || store_failed) return;
          if (next < items.size()) {
            Item& cand = items[next++];
            if (cand.fate == kWaits && cand.outcome.ok() && !stopped.count(cand.s.disk.value())) {
              it = &cand;
              ++busy;
            } else {
              skipped = true;
            }
            continue;
          }
          if (skipped) run_cv_.SignalAll();
          skipped = false;
          run_cv_.Wait(&run_mu_);
        }
      }
      Status one = UploadOne(it->s, it->size);
      if (one.ok() && options_.on_uploaded) options_.on_uploaded();
      MutexLock lock(&run_mu_);
      --busy;
      if (one.ok()) {
        it->fate = kUploaded;
        pass_bytes += it->size;
        recount();
      } else {
        it->outcome = one;
        if (one.code() != Status::Code::kCorruption) {
          store_failed = true;
        } else {
          stopped.insert(it->s.disk.value());
        }
      }
      run_cv_.SignalAll();
    }
  };

  // This thread lists: at the start, and again whenever a seal was reported (Kick) before the
  // pass ran dry, so that a segment sealed meanwhile is counted at once and uploaded by this pass
  // (while writes keep sealing, one pass goes on; Stop() ends its listings).
  {
    MutexLock lock(&run_mu_);
    sealed_since_listing_ = false;
  }
  Status listed = take_in();
  if (!listed.ok()) return listed;
  std::vector<std::thread> workers;
  for (int t = 0; t < std::max(options_.parallel, 1); ++t) {
    workers.emplace_back([&work, t] {
      NameThisThread("seg-upload-" + std::to_string(t));
      work();
    });
  }
  for (bool relist = true; relist;) {
    relist = false;
    {
      MutexLock lock(&run_mu_);
      for (;;) {
        if (sealed_since_listing_ && !stopping_ && !store_failed && listed.ok()) {
          sealed_since_listing_ = false;
          relist = true;
          break;
        }
        if ((next == items.size() || store_failed) && busy == 0) {
          done = true;
          break;
        }
        run_cv_.Wait(&run_mu_);
      }
    }
    if (relist) listed = take_in();
  }
  run_cv_.SignalAll();
  for (std::thread& t : workers) t.join();
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();

  // The first error, in seal order; a mismatch stops only its disk.
  Status first = listed;
  std::map<uint64_t, std::string> stops;
  for (const Item& it : items) {
    const engine::SealedSegment& s = it.s;
    if (it.fate != kWaits) continue;
    if (it.outcome.code() == Status::Code::kCorruption && !stopped_before.count(s.disk.value())) {
      ARCHIL_LOG(kError) << "tier: uploads of " << engine::DiskIdFromNo(s.disk).str()
                         << " stop: " << it.outcome.ToString();
      stops.emplace(s.disk.value(), it.outcome.ToString());
    }
    if (!it.outcome.ok() && first.ok()) first = it.outcome;
  }
  {
    MutexLock lock(&mu_);
    for (auto& [disk, why] : stops) {
      stats_.stopped_disks.insert(disk);
      stats_.stop_reasons.emplace(disk, why);
    }
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
