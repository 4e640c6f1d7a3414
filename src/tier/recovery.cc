#include "tier/recovery.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <map>

#include "base/log.h"
#include "engine/log_record.h"
#include "io/posix_env.h"
#include "tier/log_object.h"
#include "tier/segment_uploader.h"

namespace archil::tier {
namespace {

constexpr uint64_t kPiece = uint64_t{8} << 20;

// Every key under `prefix`, in key order.
Result<std::vector<std::string>> ListAll(store::ObjectStore* store, const std::string& prefix) {
  std::vector<std::string> keys;
  std::string after;
  for (;;) {
    ARCHIL_ASSIGN_OR_RETURN(store::ListPage page, store->List(prefix, after, 1000));
    for (const store::ObjectInfo& o : page.objects) keys.push_back(o.key);
    if (!page.truncated || page.objects.empty()) return keys;
    after = page.objects.back().key;
  }
}

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

}  // namespace

Result<RecoveryReport> RecoverFromStore(const engine::EngineOptions& options,
                                        store::ObjectStore* store) {
  if (std::filesystem::exists(options.dir + "/db/CURRENT")) {
    return Status::FailedPrecondition("recovery: " + options.dir +
                                      " already holds an engine; recover into an empty directory");
  }
  // Each disk's log objects, in key order: generation, then first seq.
  ARCHIL_ASSIGN_OR_RETURN(std::vector<std::string> keys, ListAll(store, "disks/"));
  std::map<uint64_t, std::vector<std::string>> logs;
  for (const std::string& key : keys) {
    // disks/<dsk-id>/log/<gen>/<first>
    const size_t slash = key.find('/', 6);
    if (slash == std::string::npos || key.compare(slash, 5, "/log/") != 0) continue;
    Result<DiskId> id = DiskId::Parse(key.substr(6, slash - 6));
    if (!id.ok()) continue;
    Result<engine::DiskNo> disk = engine::DiskNoFromId(*id);
    if (!disk.ok()) continue;
    logs[disk->value()].push_back(key);
  }
  RecoveryReport report;
  // First read: each disk's last seq and what its records depend on.
  std::map<uint64_t, uint64_t> last;
  std::map<uint64_t, std::vector<std::pair<engine::DiskNo, engine::Seq>>> depends;
  for (const auto& [no, objects] : logs) {
    for (const std::string& key : objects) {
      ARCHIL_ASSIGN_OR_RETURN(std::string bytes, store->Get(key));
      Result<LogObject> o = DecodeLogObject(bytes);
      if (!o.ok()) return o.status().WithContext(key);
      if (o->disk.value() != no) return Status::Corruption(key + " holds another disk's log");
      last[no] = o->last_seq().value();
      for (const std::string& rec : o->records) {
        ARCHIL_ASSIGN_OR_RETURN(engine::LogRecord r, engine::DecodeLogRecord(rec, o->disk));
        for (const auto& d : r.depends_on) depends[no].push_back(d);
      }
    }
  }
  // A disk whose log needs more of another's than the store holds is dropped, and so are the
  // disks that need it: the shipper never lets this happen, so it is an error.
  for (bool changed = true; changed;) {
    changed = false;
    for (auto it = logs.begin(); it != logs.end();) {
      bool met = true;
      for (const auto& [other, seq] : depends[it->first]) {
        auto l = last.find(other.value());
        if (!logs.count(other.value()) || l == last.end() || l->second < seq.value()) met = false;
      }
      if (met) {
        ++it;
        continue;
      }
      ARCHIL_LOG(kError) << "recovery: dropping " << engine::DiskIdFromNo(engine::DiskNo(it->first))
                         << ": its log depends on more of another disk's log than the store holds";
      ++report.dropped_disks;
      it = logs.erase(it);
      changed = true;
    }
  }
  {
    ARCHIL_ASSIGN_OR_RETURN(std::unique_ptr<engine::Engine> e, engine::Engine::Open(options));
    for (const auto& [no, objects] : logs) {
      const engine::DiskNo disk(no);
      for (const std::string& key : objects) {
        ARCHIL_ASSIGN_OR_RETURN(std::string bytes, store->Get(key));
        Result<LogObject> o = DecodeLogObject(bytes);
        if (!o.ok()) return o.status().WithContext(key);
        if (o->disk != disk) return Status::Corruption(key + " holds another disk's log");
        ARCHIL_RETURN_IF_ERROR(e->ApplyLogRecords(disk, o->records).WithContext(key));
        ++report.log_objects;
        report.records += o->records.size();
      }
      ++report.disks;
    }
  }
  // Reopened, the engine knows the lineages, which name the segment objects.
  ARCHIL_ASSIGN_OR_RETURN(std::unique_ptr<engine::Engine> e, engine::Engine::Open(options));
  for (const auto& [no, objects] : logs) {
    const engine::DiskNo disk(no);
    Result<engine::LineageInfo> lineage = e->Lineage(disk);
    if (!lineage.ok()) continue;  // a disk whose log ends in its deletion
    ARCHIL_ASSIGN_OR_RETURN(auto segments, e->SegmentFilesOf(disk));
    for (const auto& [seg, path] : segments) {
      const std::string key = SegmentUploader::ObjectKey(lineage->root, disk, seg);
      ARCHIL_ASSIGN_OR_RETURN(uint64_t size, Download(store, key, path));
      ++report.segments;
      report.segment_bytes += size;
    }
  }
  ARCHIL_LOG(kInfo) << "recovery: " << report.disks << " disks, " << report.records
                    << " log records in " << report.log_objects << " objects, " << report.segments
                    << " segments (" << report.segment_bytes << " bytes)";
  return report;
}

}  // namespace archil::tier
