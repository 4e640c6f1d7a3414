// tier_bench: what a disk's metadata costs the tier (docs/tiering.md §3, §6), on a real directory
// and a dir:// bucket: a disk of --files files (4 KiB each, 100 to a directory) is written, its
// segments uploaded and its log shipped; then a snapshot is taken and recovery runs twice into
// empty directories, once from the log alone and once from the snapshot.
//
//   tier_bench --dir DIR [--files N]
//
// Rows ("ROW: ..." as every bench script prints them; '#' lines are details):
//   floor, copying the segment files once   the data a recovery downloads, copied and synced
//   log shipped per file                    log bytes in the bucket per file created and written
//   snapshot, N files                       Take + Upload of the disk's state; ms and MiB/s
//   recovery from the log, N files          RecoverFromStore with no snapshot published
//   recovery from the snapshot, N files     RecoverFromStore from the snapshot (no log after it)
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>

#include "base/clock.h"
#include "engine/engine.h"
#include "io/posix_env.h"
#include "store/dir_store.h"
#include "tier/log_object.h"
#include "tier/log_shipper.h"
#include "tier/recovery.h"
#include "tier/segment_uploader.h"
#include "tier/snapshotter.h"

namespace archil::tier {
namespace {

using Clock = std::chrono::steady_clock;

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "tier_bench: %s\n", what.c_str());
  std::_Exit(1);
}
void Check(const Status& s, const std::string& what) {
  if (!s.ok()) Die(what + ": " + s.ToString());
}
template <typename T>
T Take(Result<T> r, const std::string& what) {
  Check(r.status(), what);
  return std::move(r).value();
}
double MsSince(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

engine::EngineOptions Options(const std::string& dir) {
  engine::EngineOptions o;
  o.env = io::PosixEnv();
  o.dir = dir;
  o.clock = &SystemClock::Instance();
  o.log_commits = o.keep_segments_until_uploaded = true;
  return o;
}

uint64_t Bytes(store::ObjectStore* s, const std::string& prefix) {
  uint64_t n = 0;
  for (const store::ObjectInfo& o : Take(store::ListAll(s, prefix), "list")) n += o.size;
  return n;
}

void Run(const std::string& dir, int files) {
  std::filesystem::remove_all(dir);
  auto bucket = Take(store::DirStore::Open(dir + "/bucket"), "open the bucket");
  auto e = Take(engine::Engine::Open(Options(dir + "/a")), "open the engine");
  const engine::DiskNo disk(1);
  Check(e->CreateDisk(disk, {}), "create the disk");
  posix::FileSystem* fs = Take(e->Disk(disk), "disk");
  const std::string block(4096, 'x');
  posix::Ino parent = posix::kRootIno;
  for (int i = 0; i < files; ++i) {
    if (i % 100 == 0) {
      parent =
          Take(fs->Mkdir(posix::kRootIno, "d" + std::to_string(i / 100), 0755, {}), "mkdir").ino;
    }
    const posix::Attr f =
        Take(fs->Mknod(parent, "f" + std::to_string(i), S_IFREG | 0644, 0, {}), "create");
    Take(fs->Write(f.ino, 0, block), "write");
  }
  Check(e->SealSegmentsOlderThan(0), "seal");
  SegmentUploaderOptions u;
  u.engine = e.get();
  u.store = bucket.get();
  Check(SegmentUploader(u).Pass(), "upload");
  LogShipperOptions l;
  l.engine = e.get();
  l.store = bucket.get();
  Check(LogShipper(l).Pass(), "ship");
  const uint64_t log_bytes = Bytes(bucket.get(), LogObjectPrefix(disk));
  std::printf("# %d files of 4 KiB, %d directories; log %.1f MiB in the bucket\n", files,
              (files + 99) / 100, log_bytes / 1048576.0);
  std::printf("log shipped per file: %.0f bytes\n", double(log_bytes) / files);

  // The floor of any recovery that downloads the data: copying the segment files once, synced.
  auto t = Clock::now();
  std::filesystem::create_directories(dir + "/floor");
  uint64_t copied = 0;
  for (const auto& [seg, path] : Take(e->SegmentFilesOf(disk), "segments")) {
    const std::string to = dir + "/floor/" + std::to_string(seg.value());
    std::filesystem::copy_file(path, to);
    const int fd = ::open(to.c_str(), O_RDONLY);
    if (fd < 0 || ::fsync(fd) != 0) Die("fsync " + to);
    ::close(fd);
    copied += std::filesystem::file_size(to);
  }
  Check(io::PosixEnv()->SyncDir(dir + "/floor"), "sync");
  std::printf("floor, copying the segment files once (%.1f MiB, synced): %.0f ms\n",
              copied / 1048576.0, MsSince(t));

  t = Clock::now();
  const std::string fresh1 = dir + "/from-log";
  RecoveryReport r1 = Take(RecoverFromStore(Options(fresh1), bucket.get()), "recover from the log");
  const double from_log = MsSince(t);
  std::printf("# recovery from the log: %llu records, %llu segments (%.1f MiB) downloaded\n",
              (unsigned long long)r1.records, (unsigned long long)r1.segments,
              r1.segment_bytes / 1048576.0);
  std::printf("recovery from the log, %d files: %.0f ms\n", files, from_log);

  SnapshotterOptions so;
  so.engine = e.get();
  so.store = bucket.get();
  so.clock = &SystemClock::Instance();
  Snapshotter snapshotter(so);
  t = Clock::now();
  const engine::Seq x = Take(snapshotter.TakeAndUpload(disk), "snapshot");
  const double snap_ms = MsSince(t);
  Check(snapshotter.Publish(disk, x), "publish");
  const SnapshotterStats ss = snapshotter.stats();
  std::printf("# snapshot at seq %llu: %llu parts, %.1f MiB\n", (unsigned long long)x.value(),
              (unsigned long long)ss.parts, ss.bytes / 1048576.0);
  std::printf("snapshot, %d files: %.0f ms, %.0f MiB/s\n", files, snap_ms,
              ss.bytes / 1048576.0 / (snap_ms / 1000));

  t = Clock::now();
  const std::string fresh2 = dir + "/from-snapshot";
  RecoveryReport r2 =
      Take(RecoverFromStore(Options(fresh2), bucket.get()), "recover from the snapshot");
  const double from_snap = MsSince(t);
  std::printf("# recovery from the snapshot: %llu keys, %llu records, %llu segments (%.1f MiB)\n",
              (unsigned long long)r2.snapshot_entries, (unsigned long long)r2.records,
              (unsigned long long)r2.segments, r2.segment_bytes / 1048576.0);
  std::printf("recovery from the snapshot, %d files: %.0f ms\n", files, from_snap);
  e.reset();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace archil::tier

int main(int argc, char** argv) {
  std::string dir;
  int files = 20000;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--dir" && i + 1 < argc) {
      dir = argv[++i];
    } else if (a == "--files" && i + 1 < argc) {
      files = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: tier_bench --dir DIR [--files N]\n");
      return 2;
    }
  }
  if (dir.empty() || files <= 0) {
    std::fprintf(stderr, "usage: tier_bench --dir DIR [--files N]\n");
    return 2;
  }
  archil::tier::Run(dir, files);
  return 0;
}
