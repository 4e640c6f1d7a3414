#include "tier/recovery.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <filesystem>
#include <map>
#include <optional>
#include <thread>
#include <tuple>

#include "base/crc32c.h"
#include "base/log.h"
#include "base/thread_name.h"
#include "engine/records/log_record.h"
#include "io/posix_env.h"
#include "tier/log_object.h"
#include "tier/manifest.h"
#include "tier/segment_uploader.h"
#include "tier/snapshot_part.h"
#include "tier/snapshotter.h"

namespace archil::tier {
namespace {

constexpr uint64_t kPiece = uint64_t{8} << 20;
constexpr size_t kDownloads = 8;  // segment downloads at once

// Downloads object `key` to `path`, durably; returns its size.
Result<uint64_t> Download(store::ObjectStore* store, const std::string& key,
                          const std::string& path) {
  const std::string dir = std::filesystem::path(path).parent_path().string();
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Status::IoError("create " + dir + ": " + ec.message());
  const std::string tmp = path + ".recovering";
  const int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return Status::FromErrno(errno, "create " + tmp);
  uint64_t off = 0;
  Status s;
  for (;;) {
    Result<std::string> piece = store->Get(key, off, kPiece);
    if (!piece.ok()) {
      s = piece.status().code() == Status::Code::kNotFound
              ? Status::Corruption("segment object " + key + " is missing from the store")
              : piece.status();
      break;
    }
    for (size_t done = 0; done < piece->size() && s.ok();) {
      const ssize_t n =
          pwrite(fd, piece->data() + done, piece->size() - done, static_cast<off_t>(off + done));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) s = Status::FromErrno(errno, "write " + tmp);
      if (n > 0) done += static_cast<size_t>(n);
    }
    if (!s.ok()) break;
    off += piece->size();
    if (piece->size() < kPiece) break;
  }
  if (s.ok() && fsync(fd) != 0) s = Status::FromErrno(errno, "fsync " + tmp);
  close(fd);
  if (s.ok() && rename(tmp.c_str(), path.c_str()) != 0)
    s = Status::FromErrno(errno, "rename " + tmp);
  if (s.ok()) s = io::PosixEnv()->SyncDir(dir);
  if (!s.ok()) {
    unlink(tmp.c_str());
    return s;
  }
  return off;
}

// Downloads every (key, file) of `wanted`, kDownloads at once (one stream is bound by the
// store's first byte per piece, not its bandwidth); returns their total size, or the first error
// in `wanted`'s order (no download starts after an error).
Result<uint64_t> DownloadAll(store::ObjectStore* store,
                             const std::vector<std::pair<std::string, std::string>>& wanted,
                             Progress* progress) {
  std::vector<Result<uint64_t>> got(wanted.size(), Status::Unavailable("not downloaded"));
  std::atomic<size_t> next{0}, done{0};
  std::atomic<uint64_t> bytes_done{0};
  std::atomic<bool> failed{false};
  auto work = [&] {
    for (size_t i = next++; i < wanted.size() && !failed; i = next++) {
      got[i] = Download(store, wanted[i].first, wanted[i].second);
      if (!got[i].ok()) {
        failed = true;
      } else if (progress != nullptr) {
        const uint64_t b = bytes_done += *got[i];
        progress->Update("segments downloaded", ++done, wanted.size(), b);
      }
    }
  };
  std::vector<std::thread> helpers;
  for (size_t t = 1; t < std::min(kDownloads, wanted.size()); ++t) {
    helpers.emplace_back([&work, t] {
      NameThisThread("recovery-" + std::to_string(t));
      work();
    });
  }
  work();
  for (std::thread& t : helpers) t.join();
  uint64_t bytes = 0;
  for (const Result<uint64_t>& r : got) {
    if (!r.ok()) return r.status();
    bytes += *r;
  }
  return bytes;
}

// What recovery replays for one disk: a base snapshot (none: the log from seq 1) and the log
// objects after it.
struct DiskSource {
  DiskManifest manifest;  // empty if the disk has none yet
  std::optional<SnapshotManifest> base;
  std::vector<std::string> logs;  // in key order (generation, then first seq)
  uint64_t last = 0;              // the last seq the disk recovers to
  std::vector<std::pair<engine::DiskNo, engine::Seq>> depends;  // of records after the base
};

uint64_t BaseSeq(const DiskSource& d) { return d.base ? d.base->seq.value() : 0; }

// The newest snapshot the manifest publishes whose manifest and parts are all in the store;
// nullopt if it publishes none. Corruption if it publishes some and none is whole.
Result<std::optional<SnapshotManifest>> ChooseBase(store::ObjectStore* store, engine::DiskNo disk,
                                                   const DiskManifest& manifest) {
  Status why;
  for (const PublishedSnapshot& p : manifest.snapshots) {
    const std::string key = SnapshotManifestKey(disk, p.owner_gen, p.seq);
    Result<std::string> bytes = store->Get(key);
    Result<SnapshotManifest> m =
        bytes.ok() ? DecodeSnapshotManifest(*bytes) : Result<SnapshotManifest>(bytes.status());
    Status s = m.ok() ? Status::Ok() : m.status().WithContext(key);
    if (s.ok() && (m->disk != disk || m->seq != p.seq)) {
      s = Status::Corruption(key + " is not the snapshot the manifest names");
    }
    for (size_t i = 0; s.ok() && i < m->parts.size(); ++i) {
      const std::string part = SnapshotPartKey(disk, p.owner_gen, p.seq, static_cast<uint32_t>(i));
      Result<store::ObjectInfo> head = store->Head(part);
      if (!head.ok())
        s = head.status().WithContext(part);
      else if (head->size != m->parts[i].size)
        s = Status::Corruption(part + " has the wrong size");
    }
    if (s.ok()) return std::optional<SnapshotManifest>(std::move(*m));
    ARCHIL_LOG(kError) << "recovery: snapshot " << key << " is not usable: " << s.ToString();
    why = s;
  }
  if (!why.ok())
    return Status::Corruption("no published snapshot of " + engine::DiskIdFromNo(disk).str() +
                              " is whole: " + why.message());
  return std::optional<SnapshotManifest>();
}

Status ApplySnapshot(engine::Engine* e, store::ObjectStore* store, const SnapshotManifest& m,
                     RecoveryReport* report) {
  for (size_t i = 0; i < m.parts.size(); ++i) {
    const std::string key = SnapshotPartKey(m.disk, m.owner_gen, m.seq, static_cast<uint32_t>(i));
    ARCHIL_ASSIGN_OR_RETURN(std::string bytes, store->Get(key));
    if (bytes.size() != m.parts[i].size || Crc32c(bytes) != m.parts[i].crc32c) {
      return Status::Corruption(key + " is not the part its snapshot manifest lists");
    }
    Result<SnapshotPart> part = DecodeSnapshotPart(bytes);
    if (!part.ok()) return part.status().WithContext(key);
    if (part->disk != m.disk || part->seq != m.seq || part->index != i ||
        part->entries.size() != m.parts[i].entries) {
      return Status::Corruption(key + " is not the part its snapshot manifest lists");
    }
    std::vector<std::tuple<engine::Cf, std::string, std::string>> entries;
    entries.reserve(part->entries.size());
    for (SnapshotEntry& en : part->entries) {
      entries.emplace_back(en.cf, std::move(en.key), std::move(en.value));
    }
    ARCHIL_RETURN_IF_ERROR(
        e->ApplySnapshotEntries(m.disk, m.seq, i == 0, entries).WithContext(key));
    report->snapshot_entries += entries.size();
  }
  ++report->snapshots;
  return Status::Ok();
}

// A recovery that a crash interrupted is started again from nothing: this file says one ran.
constexpr const char* kMarker = "/RECOVERING";

Status StartMarker(const std::string& dir) {
  std::error_code ec;
  if (std::filesystem::exists(dir + kMarker)) {
    ARCHIL_LOG(kWarn) << "recovery: an earlier recovery into " << dir
                      << " did not finish; starting again";
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
      if (entry.path().filename() != kMarker + 1) std::filesystem::remove_all(entry.path(), ec);
      if (ec) return Status::IoError("empty " + dir + ": " + ec.message());
    }
  } else if (std::filesystem::exists(dir + "/db/CURRENT")) {
    return Status::FailedPrecondition("recovery: " + dir +
                                      " already holds an engine; recover into an empty directory");
  }
  std::filesystem::create_directories(dir, ec);
  if (ec) return Status::IoError("create " + dir + ": " + ec.message());
  const int fd = open((dir + kMarker).c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return Status::FromErrno(errno, "create " + dir + kMarker);
  close(fd);
  return io::PosixEnv()->SyncDir(dir);
}

Status EndMarker(const std::string& dir) {
  if (unlink((dir + kMarker).c_str()) != 0) return Status::FromErrno(errno, "remove the marker");
  return io::PosixEnv()->SyncDir(dir);
}

}  // namespace

Result<RecoveryReport> RecoverFromStore(const engine::EngineOptions& options,
                                        store::ObjectStore* store, uint32_t owner_gen,
                                        Progress* progress) {
  if (owner_gen == 0) return Status::InvalidArgument("recovery: owner generation 0");
  ARCHIL_RETURN_IF_ERROR(StartMarker(options.dir));
  // Every disk with a manifest or log objects; each one's log objects in key order.
  ARCHIL_ASSIGN_OR_RETURN(std::vector<store::ObjectInfo> objects, store::ListAll(store, "disks/"));
  std::map<uint64_t, DiskSource> disks;
  for (const store::ObjectInfo& object : objects) {
    Result<LogObjectName> name = ParseLogObjectKey(object.key);
    if (name.ok()) {
      disks[name->disk.value()].logs.push_back(object.key);
      continue;
    }
    const size_t slash = object.key.find('/', 6);
    if (slash == std::string::npos || object.key.compare(slash, std::string::npos, "/MANIFEST")) {
      continue;
    }
    Result<engine::DiskNo> disk =
        engine::DiskNoFromText(std::string_view(object.key).substr(6, slash - 6));
    if (disk.ok()) disks[disk->value()];
  }
  RecoveryReport report;
  size_t log_objects = 0, logs_read = 0, logs_replayed = 0;
  uint64_t log_bytes = 0;
  for (const auto& [no, d] : disks) log_objects += d.logs.size();
  // First read: each disk's manifest (a deleted disk is skipped), its base, its last seq, and
  // what its records after the base depend on. Only the log objects the manifest's owner ranges
  // give to their generation count, each up to its range's end: what a fenced owner stored
  // after it was fenced is not read.
  for (auto it = disks.begin(); it != disks.end();) {
    const engine::DiskNo disk(it->first);
    DiskSource& d = it->second;
    ARCHIL_ASSIGN_OR_RETURN(ManifestRead read, ReadDiskManifest(store, disk));
    d.manifest = std::move(read.manifest);
    if (d.manifest.deleting) {
      ++report.deleted_disks;
      it = disks.erase(it);
      continue;
    }
    ARCHIL_ASSIGN_OR_RETURN(d.base, ChooseBase(store, disk, d.manifest));
    d.last = BaseSeq(d);
    std::vector<std::string> usable;
    for (const std::string& key : d.logs) {
      ARCHIL_ASSIGN_OR_RETURN(std::string bytes, store->Get(key));
      log_bytes += bytes.size();
      if (progress) progress->Update("log objects read", ++logs_read, log_objects, log_bytes);
      Result<LogObject> o = DecodeLogObject(bytes);
      if (!o.ok()) return o.status().WithContext(key);
      if (o->disk != disk) return Status::Corruption(key + " holds another disk's log");
      const std::optional<engine::Seq> through =
          UsableThrough(d.manifest, o->owner_gen, o->first_seq, o->last_seq());
      if (!through) {
        ++report.fenced_log_objects;
        continue;
      }
      usable.push_back(key);
      d.last = std::max(d.last, through->value());
      for (const std::string& rec : o->records) {
        ARCHIL_ASSIGN_OR_RETURN(engine::LogRecord r, engine::DecodeLogRecord(rec, o->disk));
        if (r.seq.value() > BaseSeq(d) && r.seq.value() <= through->value()) {
          for (const auto& dep : r.depends_on) d.depends.push_back(dep);
        }
      }
    }
    d.logs = std::move(usable);
    ++it;
  }
  // A disk whose log needs more of another's than the store holds is dropped, and so are the
  // disks that need it: the shipper never lets this happen, so it is an error.
  for (bool changed = true; changed;) {
    changed = false;
    for (auto it = disks.begin(); it != disks.end();) {
      bool met = true;
      for (const auto& [other, seq] : it->second.depends) {
        auto o = disks.find(other.value());
        if (o == disks.end() || o->second.last < seq.value()) met = false;
      }
      if (met) {
        ++it;
        continue;
      }
      ARCHIL_LOG(kError) << "recovery: dropping " << engine::DiskIdFromNo(engine::DiskNo(it->first))
                         << ": its log depends on more of another disk's log than the store holds";
      ++report.dropped_disks;
      it = disks.erase(it);
      changed = true;
    }
  }
  {
    ARCHIL_ASSIGN_OR_RETURN(std::unique_ptr<engine::Engine> e, engine::Engine::Open(options));
    // What the recovered engine writes from now on is a new owner's: no name of its segments or
    // of its objects is one the old owner could have used.
    ARCHIL_RETURN_IF_ERROR(e->SetOwnerGen(owner_gen));
    size_t usable_logs = 0;
    for (const auto& [no, d] : disks) usable_logs += d.logs.size();
    for (const auto& [no, d] : disks) {
      const engine::DiskNo disk(no);
      if (d.base) ARCHIL_RETURN_IF_ERROR(ApplySnapshot(e.get(), store, *d.base, &report));
      for (const std::string& key : d.logs) {
        ARCHIL_ASSIGN_OR_RETURN(std::string bytes, store->Get(key));
        if (progress) progress->Update("log objects replayed", ++logs_replayed, usable_logs, 0);
        Result<LogObject> o = DecodeLogObject(bytes);
        if (!o.ok()) return o.status().WithContext(key);
        if (o->disk != disk) return Status::Corruption(key + " holds another disk's log");
        const uint64_t through =
            UsableThrough(d.manifest, o->owner_gen, o->first_seq, o->last_seq())->value();
        if (through <= BaseSeq(d)) continue;  // in the snapshot
        const size_t skip = o->first_seq.value() > BaseSeq(d)
                                ? 0
                                : static_cast<size_t>(BaseSeq(d) - o->first_seq.value() + 1);
        const size_t end = static_cast<size_t>(through - o->first_seq.value() + 1);
        const std::vector<std::string> after(o->records.begin() + static_cast<ptrdiff_t>(skip),
                                             o->records.begin() + static_cast<ptrdiff_t>(end));
        ARCHIL_RETURN_IF_ERROR(e->ApplyLogRecords(disk, after).WithContext(key));
        ++report.log_objects;
        report.records += after.size();
      }
      ++report.disks;
    }
  }
  // Reopened, the engine knows the lineages, which name the segment objects.
  {
    ARCHIL_ASSIGN_OR_RETURN(std::unique_ptr<engine::Engine> e, engine::Engine::Open(options));
    std::vector<std::pair<std::string, std::string>> wanted;  // (object key, file)
    for (const auto& [no, d] : disks) {
      const engine::DiskNo disk(no);
      Result<engine::LineageInfo> lineage = e->Lineage(disk);
      if (!lineage.ok()) continue;  // a disk whose log ends in its deletion
      ARCHIL_ASSIGN_OR_RETURN(auto segments, e->SegmentFilesOf(disk));
      for (const auto& [seg, path] : segments) {
        wanted.emplace_back(SegmentUploader::ObjectKey(lineage->root, disk, seg), path);
      }
    }
    ARCHIL_ASSIGN_OR_RETURN(report.segment_bytes, DownloadAll(store, wanted, progress));
    report.segments = wanted.size();
  }
  ARCHIL_RETURN_IF_ERROR(EndMarker(options.dir));
  ARCHIL_LOG(kInfo) << "recovery: " << report.disks << " disks, " << report.snapshots
                    << " snapshots (" << report.snapshot_entries << " keys), " << report.records
                    << " log records in " << report.log_objects << " objects, " << report.segments
                    << " segments (" << report.segment_bytes << " bytes)";
  return report;
}

}  // namespace archil::tier
