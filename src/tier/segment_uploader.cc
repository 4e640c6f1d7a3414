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
#include <map>
#include <set>
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

// One pass's queue: what it has taken in, in seal order, and its workers' state. Every field is
// read and written under the uploader's run_mu_, except an item's segment and size (fixed once
// appended) and its outcome while its one worker uploads it. A deque: workers hold references to
// its items while a listing appends.
class SegmentUploader::UploadPass {
 public:
  UploadPass(SegmentUploader* up, std::set<uint64_t> stopped)
      : up_(up), stopped_(std::move(stopped)) {}

  // Lists the sealed segments and takes in those not yet taken. Ok, or the listing's error.
  Status TakeIn() ARCHIL_EXCLUDES(up_->run_mu_);
  // A worker takes the next item in seal order, uploads it, and waits for more until the pass is
  // done; after a store error it takes no new item.
  void Work() ARCHIL_EXCLUDES(up_->run_mu_);
  // On the pass's own thread while the workers run: lists again whenever a seal was reported
  // (Kick) before the pass ran dry, so that a segment sealed meanwhile is counted at once and
  // uploaded by this pass (while writes keep sealing, one pass goes on; Stop() ends its
  // listings). Returns when nothing it took in waits for a worker, with the last listing's
  // status (`listed` if it listed no more).
  Status ListUntilDone(Status listed) ARCHIL_EXCLUDES(up_->run_mu_);
  // After the workers are joined: the first error in seal order (a mismatch stops only its
  // disk, logged once), and the pass's figures into the uploader's stats.
  Status Finish(Status listed, const std::set<uint64_t>& stopped_before, double secs)
      ARCHIL_EXCLUDES(up_->mu_);

 private:
  enum Fate : char { kWaits, kGone, kUploaded };
  struct Item {
    engine::SealedSegment s;
    uint64_t size = 0;
    Fate fate = kWaits;
    Status outcome;
  };
  // Publishes what waits (every item neither uploaded nor gone), per disk and in all, to stats_.
  // O(items) per call, a few hundred at most, against one upload of a segment per call.
  void Recount() ARCHIL_REQUIRES(up_->run_mu_) ARCHIL_EXCLUDES(up_->mu_);
  // The size of each fresh item's file, or its fate: gone with its disk (a purge), or an error
  // (a SEG record still there and no file is the engine's bug).
  void Measure(std::vector<Item>* fresh) const;

  SegmentUploader* const up_;
  std::set<uint64_t> stopped_;  // disks whose uploads stopped: none of their items is taken
  std::deque<Item> items_;
  std::set<std::pair<uint64_t, uint64_t>> taken_;  // (disk, seg) of every item
  size_t next_ = 0;
  int busy_ = 0;
  bool store_failed_ = false;
  bool done_ = false;
  uint64_t bytes_ = 0;  // uploaded by this pass
};

void SegmentUploader::UploadPass::Recount() {
  std::map<uint64_t, DiskBacklog> waiting;
  uint64_t segments = 0, bytes = 0;
  int64_t oldest = 0;
  for (const Item& it : items_) {
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
  MutexLock stats_lock(&up_->mu_);
  up_->stats_.waiting = std::move(waiting);
  up_->stats_.pending_segments = segments;
  up_->stats_.pending_bytes = bytes;
  up_->stats_.oldest_pending_sealed_ns = oldest;
}

void SegmentUploader::UploadPass::Measure(std::vector<Item>* fresh) const {
  for (Item& it : *fresh) {
    struct stat st;
    if (stat(it.s.path.c_str(), &st) == 0) {
      it.size = static_cast<uint64_t>(st.st_size);
    } else if (errno != ENOENT) {
      it.outcome = Status::FromErrno(errno, "stat " + it.s.path);
    } else {
      Result<engine::LineageInfo> l = up_->options_.engine->Lineage(it.s.disk);
      if (!l.ok() && l.status().code() == Status::Code::kNotFound) {
        it.fate = kGone;
      } else {
        it.outcome = Status::Internal("sealed segment file " + it.s.path + " is missing");
      }
    }
  }
}

Status SegmentUploader::UploadPass::TakeIn() {
  ARCHIL_ASSIGN_OR_RETURN(std::vector<engine::SealedSegment> sealed,
                          up_->options_.engine->SealedSegments());
  std::vector<Item> fresh;
  {
    MutexLock lock(&up_->run_mu_);
    for (engine::SealedSegment& s : sealed) {
      if (!taken_.emplace(s.disk.value(), s.seg.value()).second) continue;
      fresh.push_back(Item{std::move(s), 0, kWaits, Status::Ok()});
    }
  }
  Measure(&fresh);
  MutexLock lock(&up_->run_mu_);
  for (Item& it : fresh) items_.push_back(std::move(it));
  Recount();  // the listing saw every segment that waits
  up_->run_cv_.SignalAll();
  return Status::Ok();
}

void SegmentUploader::UploadPass::Work() {
  for (;;) {
    Item* it = nullptr;
    {
      MutexLock lock(&up_->run_mu_);
      bool skipped = false;  // items passed over: the lister may be waiting for the queue's end
      while (it == nullptr) {
        if (done_ || store_failed_) return;
        if (next_ < items_.size()) {
          Item& cand = items_[next_++];
          if (cand.fate == kWaits && cand.outcome.ok() && !stopped_.count(cand.s.disk.value())) {
            it = &cand;
            ++busy_;
          } else {
            skipped = true;
          }
          continue;
        }
        if (skipped) up_->run_cv_.SignalAll();
        skipped = false;
        up_->run_cv_.Wait(&up_->run_mu_);
      }
    }
    Status one = up_->UploadOne(it->s, it->size);
    if (one.ok() && up_->options_.on_uploaded) up_->options_.on_uploaded();
    MutexLock lock(&up_->run_mu_);
    --busy_;
    if (one.ok()) {
      it->fate = kUploaded;
      bytes_ += it->size;
      Recount();
    } else {
      it->outcome = one;
      if (one.code() != Status::Code::kCorruption) {
        store_failed_ = true;
      } else {
        stopped_.insert(it->s.disk.value());
      }
    }
    up_->run_cv_.SignalAll();
  }
}

Status SegmentUploader::UploadPass::ListUntilDone(Status listed) {
  for (bool relist = true; relist;) {
    relist = false;
    {
      MutexLock lock(&up_->run_mu_);
      for (;;) {
        if (up_->sealed_since_listing_ && !up_->stopping_ && !store_failed_ && listed.ok()) {
          up_->sealed_since_listing_ = false;
          relist = true;
          break;
        }
        if ((next_ == items_.size() || store_failed_) && busy_ == 0) {
          done_ = true;
          break;
        }
        up_->run_cv_.Wait(&up_->run_mu_);
      }
    }
    if (relist) listed = TakeIn();
  }
  up_->run_cv_.SignalAll();
  return listed;
}

Status SegmentUploader::UploadPass::Finish(Status listed, const std::set<uint64_t>& stopped_before,
                                           double secs) {
  Status first = listed;
  std::map<uint64_t, std::string> stops;
  for (const Item& it : items_) {
    const engine::SealedSegment& s = it.s;
    if (it.fate != kWaits) continue;
    if (it.outcome.code() == Status::Code::kCorruption && !stopped_before.count(s.disk.value())) {
      ARCHIL_LOG(kError) << "tier: uploads of " << engine::DiskIdFromNo(s.disk).str()
                         << " stop: " << it.outcome.ToString();
      stops.emplace(s.disk.value(), it.outcome.ToString());
    }
    if (!it.outcome.ok() && first.ok()) first = it.outcome;
  }
  MutexLock lock(&up_->mu_);
  SegmentUploaderStats& stats = up_->stats_;
  for (auto& [disk, why] : stops) {
    stats.stopped_disks.insert(disk);
    stats.stop_reasons.emplace(disk, why);
  }
  if (bytes_ > 0 && secs > 0) {
    stats.bytes_per_second = static_cast<uint64_t>(static_cast<double>(bytes_) / secs);
  }
  if (!first.ok()) {
    ++stats.failed_passes;
    stats.last_error = first.ToString();
  } else {
    stats.last_error.clear();
  }
  return first;
}

Status SegmentUploader::Pass() {
  std::set<uint64_t> stopped_before;
  {
    MutexLock lock(&mu_);
    stopped_before = stats_.stopped_disks;
  }
  const auto began = std::chrono::steady_clock::now();
  UploadPass run(this, stopped_before);
  {
    MutexLock lock(&run_mu_);
    sealed_since_listing_ = false;
  }
  Status listed = run.TakeIn();
  if (!listed.ok()) return listed;
  std::vector<std::thread> workers;
  for (int t = 0; t < std::max(options_.parallel, 1); ++t) {
    workers.emplace_back([&run, t] {
      NameThisThread("seg-upload-" + std::to_string(t));
      run.Work();
    });
  }
  listed = run.ListUntilDone(listed);
  for (std::thread& t : workers) t.join();
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  return run.Finish(listed, stopped_before, secs);
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
