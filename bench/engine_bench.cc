// engine_bench: the engine's rows of bench/engine.sh, on a real directory through io::PosixEnv()
// with EngineOptions::sync = true (every mutating call returns only when durable). bench/engine.sh
// runs it beside fio's floors; run it alone with --help for the rows and their options.
//
// Output: one line per row, "ROW: p50 X ms, p95 Y ms", "ROW: N MiB/s", "ROW: N ops/s", or, for a
// ratio, "ROW: X". Lines starting with '#' are details (op counts, methods) for humans.
//
// Rows (--rows, comma-separated, run in this order on one engine):
//   write1   `engine synced 4k write`: 1 writer, 4 KiB Writes at successive offsets of one file
//            (after 200 warm-up writes); also its rate as `engine 1 synced writer`
//   writers  `engine 8 synced writers`: 8 threads, each on its own file, the same loop; aggregate
//            ops/s and WAL syncs per write (syncs / ops of Engine::commit_stats(), exact)
//   seq      `engine seq write`: 1 MiB Writes claimed in order by --seq-threads threads (so up to
//            that many MiB in flight) into one file of --seq-mib MiB, then SyncIntents (the
//            engine's fsync: every Write is already durable); and device bytes written per byte
//            (sectors-written delta of /sys/block/<disk>/stat for the disk holding --dir)
//   read     `engine 4k read`: random 4 KiB Reads of the seq file (written first if seq did not
//            run), each block at most once and at most a quarter of them, with the metadata warm
//            and the data cold (see ColdData)
//   meta     `engine creates` (1 thread), `engine creates 16 threads`, `engine stats` (GetAttr),
//            `engine readdir 100k` (ReadDir pages of 128 entries over a 100,000-entry directory)
//   history  (not in the default list) checkpoints and branches on disks of their own:
//            `engine checkpoint|branch 1k|100k files`, `engine read depth 1|10|50` (+ `changed at
//            every level`), `engine head read|readdir 0|100|1000 checkpoints`; see HistoryRows.
//            Its parts alone: history-ckpt, history-depth, history-head
//
// Percentiles are nearest-rank (docs/targets.md).
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "engine/engine.h"
#include "io/posix_env.h"
#include "posix/file_system.h"

namespace archil::engine {
namespace {

using Clock = std::chrono::steady_clock;
using posix::kRootIno;

struct Flags {
  std::string dir;
  std::string rows = "write1,writers,seq,read,meta";
  double runtime = 10;      // seconds per timed row
  uint64_t ops = 0;         // write1: a fixed op count instead of --runtime (perf, strace)
  int writers = 8;          // writers row
  uint64_t seq_mib = 1024;  // seq row: file size
  int seq_threads = 64;     // seq row: MiB in flight
  uint64_t readdir_n = 100000;
  uint64_t seed = 42;  // the read row's order, the stats row's picks
  bool sync = true;    // --no-sync: EngineOptions::sync = false (the engine without the disk)
  bool tier = false;   // --tier: log_commits and keep_segments_until_uploaded (nothing uploads)
};

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "engine_bench: %s\n", what.c_str());
  std::fflush(stdout);
  std::_Exit(1);
}
void Check(const Status& s, const std::string& what) {
  if (!s.ok()) Die(what + ": " + s.ToString());
}
template <typename T>
T Take(Result<T> r, const std::string& what) {
  if (!r.ok()) Die(what + ": " + r.status().ToString());
  return std::move(r).value();
}

double D(uint64_t n) { return static_cast<double>(n); }

// CPU time of the whole process so far (every thread): user and system seconds.
std::pair<double, double> CpuSeconds() {
  struct rusage ru;
  ::getrusage(RUSAGE_SELF, &ru);
  auto sec = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
  };
  return {sec(ru.ru_utime), sec(ru.ru_stime)};
}

double Seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// Nearest-rank percentile of latencies in microseconds.
double Pct(std::vector<double> v, int p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t rank = (v.size() * p + 99) / 100;
  return v[std::max<size_t>(rank, 1) - 1];
}
// `digits`: decimals of the ms figures (4 for rows of a few µs, whose targets are ratios).
void PrintLatency(const std::string& row, const std::vector<double>& us, int digits = 3) {
  std::printf("%s: p50 %.*f ms, p95 %.*f ms\n", row.c_str(), digits, Pct(us, 50) / 1000, digits,
              Pct(us, 95) / 1000);
}
void PrintRate(const std::string& row, double n, const char* unit) {
  std::printf("%s: %.0f %s\n", row.c_str(), n, unit);
}

// The whole disk holding `path`: st_dev -> /sys/dev/block/MAJ:MIN, and its parent directory when
// that is a partition. Empty if not a block device (tmpfs, overlay...).
std::string DiskStatPath(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return "";
  std::string dev =
      "/sys/dev/block/" + std::to_string(major(st.st_dev)) + ":" + std::to_string(minor(st.st_dev));
  std::error_code ec;
  std::filesystem::path real = std::filesystem::canonical(dev, ec);
  if (ec) return "";
  if (std::filesystem::exists(real / "partition")) real = real.parent_path();
  return std::filesystem::exists(real / "stat") ? (real / "stat").string() : "";
}
// The block layer's counters of a disk (Documentation/ABI/stable/sysfs-block: fields 5, 7, 16).
struct DeviceStat {
  uint64_t writes = 0;   // write requests completed
  uint64_t sectors = 0;  // 512-byte sectors written
  uint64_t flushes = 0;  // flush requests completed
};
DeviceStat ReadDeviceStat(const std::string& stat_path) {
  std::ifstream in(stat_path);
  uint64_t f[17] = {};
  for (uint64_t& x : f) in >> x;
  return {f[4], f[6], f[15]};
}
uint64_t SectorsWritten(const std::string& stat_path) { return ReadDeviceStat(stat_path).sectors; }

// Pages of the file `fd` in the page cache (mincore), to check that a drop worked.
uint64_t ResidentPages(int fd) {
  struct stat st;
  if (::fstat(fd, &st) != 0 || st.st_size == 0) return 0;
  void* p = ::mmap(nullptr, st.st_size, PROT_READ, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) return 0;
  const size_t page = ::sysconf(_SC_PAGESIZE);
  std::vector<unsigned char> vec((st.st_size + page - 1) / page);
  uint64_t n = 0;
  if (::mincore(p, st.st_size, vec.data()) == 0) {
    for (unsigned char v : vec) n += v & 1;
  }
  ::munmap(p, st.st_size);
  return n;
}

class Bench {
 public:
  explicit Bench(const Flags& f) : f_(f) {
    EngineOptions o;
    o.env = io::PosixEnv();
    o.dir = f.dir + "/engine";
    o.clock = &SystemClock::Instance();
    o.sync = f.sync;
    o.log_commits = o.keep_segments_until_uploaded = f.tier;
    engine_ = Take(Engine::Open(o), "open engine in " + o.dir);
    Check(engine_->CreateDisk(DiskNo(1), {}), "create disk");
    fs_ = Take(engine_->Disk(DiskNo(1)), "disk");
  }

  void Run() {
    std::stringstream rows(f_.rows);
    for (std::string row; std::getline(rows, row, ',');) {
      if (row == "write1") {
        SyncedWrite1();
      } else if (row == "writers") {
        SyncedWriters();
      } else if (row == "seq") {
        SeqWrite();
      } else if (row == "read") {
        ColdRead();
      } else if (row == "meta") {
        Metadata();
      } else if (row == "history") {
        HistoryRows();
      } else if (row == "history-ckpt") {
        CheckpointAndBranch();
      } else if (row == "history-depth") {
        ReadDepth();
      } else if (row == "history-head") {
        HeadVsCheckpoints();
      } else {
        Die("unknown row '" + row + "' (see --help)");
      }
      std::fflush(stdout);
    }
  }

 private:
  posix::Ino NewFile(posix::Ino dir, const std::string& name) {
    return Take(fs_->Mknod(dir, name, S_IFREG | 0644, 0, {}), "create " + name).ino;
  }
  bool Until(Clock::time_point start, uint64_t done) const {
    if (f_.ops > 0) return done < f_.ops;
    return Seconds(start, Clock::now()) < f_.runtime;
  }

  // One thread's loop of synced 4 KiB writes at successive offsets; latencies in µs.
  // `first`: the block index of the first write.
  std::vector<double> WriteLoop(posix::Ino ino, Clock::time_point start, uint64_t first = 0) {
    std::string block(4096, 'w');
    std::vector<double> us;
    for (uint64_t i = 0; Until(start, i); ++i) {
      block[0] = static_cast<char>(i);
      auto t0 = Clock::now();
      Take(fs_->Write(ino, (first + i) * 4096, block), "synced write");
      us.push_back(Seconds(t0, Clock::now()) * 1e6);
    }
    return us;
  }

  void SyncedWrite1() {
    posix::Ino ino = NewFile(kRootIno, "write1");
    // 200 warm-up writes (the first opens the segment: a file create and directory syncs), then
    // the measured ones continue at the next offsets.
    std::string block(4096, 'u');
    for (int i = 0; i < 200; ++i) Take(fs_->Write(ino, i * 4096, block), "warm-up");
    const std::string stat_path = DiskStatPath(f_.dir);
    DeviceStat dev0 = stat_path.empty() ? DeviceStat{} : ReadDeviceStat(stat_path);
    const auto cpu0 = CpuSeconds();
    CommitStats before = engine_->commit_stats();
    auto start = Clock::now();
    std::vector<double> us = WriteLoop(ino, start, 200);
    double s = Seconds(start, Clock::now());
    CommitStats after = engine_->commit_stats();
    const auto cpu1 = CpuSeconds();
    std::printf(
        "# engine synced 4k write, CPU per write (all threads): %.1f us user, %.1f us "
        "system\n",
        (cpu1.first - cpu0.first) * 1e6 / D(us.size()),
        (cpu1.second - cpu0.second) * 1e6 / D(us.size()));
    if (!stat_path.empty()) {
      DeviceStat dev1 = ReadDeviceStat(stat_path);
      const double n = D(us.size());
      std::printf(
          "# engine synced 4k write, device per write: %.2f write requests, %.1f KiB, %.2f "
          "flushes\n",
          D(dev1.writes - dev0.writes) / n, D(dev1.sectors - dev0.sectors) / 2 / n,
          D(dev1.flushes - dev0.flushes) / n);
    }
    std::printf(
        "# engine synced 4k write: %zu ops in %.2f s, %.0f ops/s, %llu commit ops, %llu WAL "
        "writes, %llu WAL syncs\n",
        us.size(), s, D(us.size()) / s, static_cast<unsigned long long>(after.ops - before.ops),
        static_cast<unsigned long long>(after.groups - before.groups),
        static_cast<unsigned long long>(after.syncs - before.syncs));
    PrintLatency("engine synced 4k write", us);
    PrintRate("engine 1 synced writer", D(us.size()) / s, "ops/s");
  }

  void SyncedWriters() {
    posix::Ino dir = Take(fs_->Mkdir(kRootIno, "writers", 0755, {}), "mkdir").ino;
    std::vector<posix::Ino> files;
    for (int w = 0; w < f_.writers; ++w) files.push_back(NewFile(dir, "w" + std::to_string(w)));
    std::vector<std::vector<double>> us(f_.writers);
    CommitStats before = engine_->commit_stats();
    auto start = Clock::now();
    std::vector<std::thread> threads;
    for (int w = 0; w < f_.writers; ++w) {
      threads.emplace_back([&, w] { us[w] = WriteLoop(files[w], start); });
    }
    for (auto& t : threads) t.join();
    double s = Seconds(start, Clock::now());
    CommitStats after = engine_->commit_stats();
    std::vector<double> all;
    for (auto& v : us) all.insert(all.end(), v.begin(), v.end());
    uint64_t ops = after.ops - before.ops, groups = after.groups - before.groups,
             syncs = after.syncs - before.syncs;
    std::string row = "engine " + std::to_string(f_.writers) + " synced writers";
    std::printf("# %s: %zu writes in %.2f s; commit ops %llu, WAL writes %llu, WAL syncs %llu\n",
                row.c_str(), all.size(), s, static_cast<unsigned long long>(ops),
                static_cast<unsigned long long>(groups), static_cast<unsigned long long>(syncs));
    PrintRate(row, D(all.size()) / s, "ops/s");
    PrintLatency(row + " latency", all);
    std::printf("%s WAL syncs per write: %.3f\n", row.c_str(), ops ? D(syncs) / D(ops) : 0.0);
  }

  // Writes the seq file: --seq-threads threads each take the next MiB until --seq-mib are written.
  // Returns the seconds it took, including the final SyncIntents.
  double WriteSeqFile() {
    seq_ino_ = NewFile(kRootIno, "seq");
    std::atomic<uint64_t> next{0};
    const std::string mib(1 << 20, 's');
    auto start = Clock::now();
    std::vector<std::thread> threads;
    for (int t = 0; t < f_.seq_threads; ++t) {
      threads.emplace_back([&] {
        for (uint64_t i; (i = next.fetch_add(1)) < f_.seq_mib;) {
          Take(fs_->Write(seq_ino_, i << 20, mib), "seq write");
        }
      });
    }
    for (auto& t : threads) t.join();
    Check(engine_->SyncIntents(), "sync");
    return Seconds(start, Clock::now());
  }

  void SeqWrite() {
    std::string stat_path = DiskStatPath(f_.dir);
    uint64_t sectors0 = stat_path.empty() ? 0 : SectorsWritten(stat_path);
    double s = WriteSeqFile();
    uint64_t sectors1 = stat_path.empty() ? 0 : SectorsWritten(stat_path);
    std::printf("# engine seq write: %llu MiB in %.2f s, %d threads\n",
                static_cast<unsigned long long>(f_.seq_mib), s, f_.seq_threads);
    PrintRate("engine seq write", D(f_.seq_mib) / s, "MiB/s");
    if (stat_path.empty()) {
      std::printf("# engine seq write device bytes per byte: n/a (%s is on no block device)\n",
                  f_.dir.c_str());
    } else {
      std::printf("# device stat %s: %llu sectors written\n", stat_path.c_str(),
                  static_cast<unsigned long long>(sectors1 - sectors0));
      std::printf("engine seq write device bytes per byte: %.3f\n",
                  D(sectors1 - sectors0) * 512.0 / D(f_.seq_mib << 20));
    }
  }

  // "Metadata in RocksDB, data cold": one Read per 1 MiB chunk first (it loads the inode and every
  // chunk record through RocksDB, so they sit in the block cache, the memtable or the page cache
  // of the SST files), then POSIX_FADV_DONTNEED on every segment file of the disk (the engine
  // reads segments through the page cache; their data is synced, so the kernel drops it). RocksDB's
  // own files are left alone. Each measured Read then finds its extent in memory and its 4 KiB on
  // the device.
  void ColdData() {
    for (uint64_t c = 0; c < f_.seq_mib; ++c) Take(fs_->Read(seq_ino_, c << 20, 4096), "warm");
    Check(engine_->SyncIntents(), "sync");
    int dropped = 0;
    uint64_t resident = 0;
    for (const auto& e :
         std::filesystem::recursive_directory_iterator(f_.dir + "/engine/segments")) {
      if (!e.is_regular_file()) continue;
      int fd = ::open(e.path().c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0) Die("open " + e.path().string());
      ::fdatasync(fd);
      if (::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) != 0) Die("fadvise");
      resident += ResidentPages(fd);
      ::close(fd);
      ++dropped;
    }
    std::printf(
        "# engine 4k read: metadata warmed by %llu reads, %d segment files dropped from the "
        "page cache (%llu of their pages still resident)\n",
        static_cast<unsigned long long>(f_.seq_mib), dropped,
        static_cast<unsigned long long>(resident));
  }

  uint64_t SegmentPagesResident() {
    uint64_t n = 0;
    for (const auto& e :
         std::filesystem::recursive_directory_iterator(f_.dir + "/engine/segments")) {
      if (!e.is_regular_file()) continue;
      int fd = ::open(e.path().c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0) continue;
      n += ResidentPages(fd);
      ::close(fd);
    }
    return n;
  }

  void ColdRead() {
    if (seq_ino_.value() == 0) WriteSeqFile();
    ColdData();
    const uint64_t blocks = f_.seq_mib * 256;
    std::vector<uint64_t> order(blocks);
    for (uint64_t i = 0; i < blocks; ++i) order[i] = i;
    std::shuffle(order.begin(), order.end(), std::mt19937_64(f_.seed));
    std::vector<double> us;
    auto start = Clock::now();
    // At most a quarter of the blocks (bench/engine.sh gives fio the same cap): a read of most of a
    // file that was just written finds more of it in the host's caches on a VM.
    for (uint64_t i = 0; i < blocks / 4 && Seconds(start, Clock::now()) < f_.runtime; ++i) {
      auto t0 = Clock::now();
      std::string got = Take(fs_->Read(seq_ino_, order[i] * 4096, 4096), "read");
      us.push_back(Seconds(t0, Clock::now()) * 1e6);
      if (got.size() != 4096 || got[0] != 's') Die("read returned wrong data");
    }
    std::printf(
        "# engine 4k read: %zu reads of distinct blocks out of %llu; %llu segment pages "
        "resident after them (read-ahead would show as more pages than reads)\n",
        us.size(), static_cast<unsigned long long>(blocks),
        static_cast<unsigned long long>(SegmentPagesResident()));
    std::printf("# engine 4k read: p10 %.3f ms, p25 %.3f ms, p75 %.3f ms, p99 %.3f ms\n",
                Pct(us, 10) / 1000, Pct(us, 25) / 1000, Pct(us, 75) / 1000, Pct(us, 99) / 1000);
    PrintLatency("engine 4k read", us);
  }

  void Metadata() {
    // Creates, one thread, synced each: the first names of the 100k directory.
    posix::Ino dir = Take(fs_->Mkdir(kRootIno, "many", 0755, {}), "mkdir").ino;
    std::atomic<uint64_t> next{0};
    auto start = Clock::now();
    while (Seconds(start, Clock::now()) < f_.runtime && next < f_.readdir_n) {
      NewFile(dir, "f" + std::to_string(next++));
    }
    double s = Seconds(start, Clock::now());
    uint64_t one = next;
    PrintRate("engine creates", D(one) / s, "ops/s");
    // The rest with 16 threads (group commit), also a row.
    start = Clock::now();
    std::vector<std::thread> threads;
    for (int t = 0; t < 16; ++t) {
      threads.emplace_back([&] {
        for (uint64_t i; (i = next.fetch_add(1)) < f_.readdir_n;) {
          NewFile(dir, "f" + std::to_string(i));
        }
      });
    }
    for (auto& t : threads) t.join();
    s = Seconds(start, Clock::now());
    std::printf("# engine creates 16 threads: %llu creates in %.2f s\n",
                static_cast<unsigned long long>(f_.readdir_n - one), s);
    PrintRate("engine creates 16 threads", D(f_.readdir_n - one) / s, "ops/s");

    // Stats: GetAttr of random entries of the directory, by inode number (what a cached-dentry
    // stat(2) asks the server), one thread.
    std::vector<posix::Ino> inos;
    for (uint64_t cookie = 0;;) {
      posix::DirPage page = Take(fs_->ReadDir(dir, cookie, 1024), "readdir");
      for (const auto& e : page.entries) inos.push_back(e.ino);
      if (page.eof || page.entries.empty()) break;
      cookie = page.entries.back().cookie;
    }
    if (inos.size() != f_.readdir_n) Die("readdir found " + std::to_string(inos.size()));
    std::mt19937_64 rng(f_.seed + 1);
    uint64_t stats = 0;
    start = Clock::now();
    while (Seconds(start, Clock::now()) < f_.runtime) {
      for (int i = 0; i < 1000; ++i, ++stats) Take(fs_->GetAttr(inos[rng() % inos.size()]), "stat");
    }
    PrintRate("engine stats", D(stats) / Seconds(start, Clock::now()), "ops/s");

    // Readdir: the whole directory in pages of 128 entries (about what a 4 KiB FUSE readdir
    // buffer holds), 5 times.
    std::vector<double> us;
    for (int rep = 0; rep < 5; ++rep) {
      auto t0 = Clock::now();
      uint64_t n = 0;
      for (uint64_t cookie = 0;;) {
        posix::DirPage page = Take(fs_->ReadDir(dir, cookie, 128), "readdir");
        n += page.entries.size();
        if (page.eof || page.entries.empty()) break;
        cookie = page.entries.back().cookie;
      }
      us.push_back(Seconds(t0, Clock::now()) * 1e6);
      if (n != f_.readdir_n) Die("readdir listed " + std::to_string(n));
    }
    std::string row = "engine readdir " + std::to_string(f_.readdir_n / 1000) + "k";
    PrintLatency(row, us);
    PrintRate(row + " entries", D(f_.readdir_n) / (Pct(us, 50) / 1e6), "ops/s");
  }

  // The history rows (checkpoints and branches, docs/formats.md §5). Each on its own disks of this
  // engine (numbers from 1000 up); every call synced like the rest. Reads are page-cache warm:
  // the file was just written and is read again and again (they measure the metadata walk, not the
  // device).
  //   engine checkpoint 1k files / 100k files   Checkpoint of a disk holding that many files
  //       (Mknod + one 4 KiB Write each, 16 threads), one 4 KiB overwrite between samples; the
  //       two disks' samples alternate
  //   engine branch 1k files / 100k files       CreateBranch from one checkpoint of those disks,
  //       each branch a new disk; alternating too
  //   engine read depth 1 / 10 / 50             4 KiB Read through the deepest branch of a chain
  //       (checkpoint, branch, checkpoint the branch, branch...) of a file written on the root and
  //       never changed since; `... changed at every level`: a file whose mode is set on every
  //       level, so each level holds an ORIGIN record for it
  //   engine head read / readdir 0, 100, 1000 checkpoints   4 KiB Read and a whole ReadDir (pages
  //       of 128) of a 1,000-entry directory at the head, after that many checkpoints with a
  //       4 KiB overwrite, a create and an unlink between each two
  DiskNo NewDisk() {
    DiskNo d(next_disk_++);
    Check(engine_->CreateDisk(d, {}), "create disk");
    return d;
  }
  posix::FileSystem* FsOf(DiskNo d) { return Take(engine_->Disk(d), "disk"); }
  size_t Samples() const { return f_.ops > 0 ? f_.ops : 500; }
  // Sampling of a pair of rows: up to Samples() each, in 2 x --runtime.
  bool More(Clock::time_point start, size_t done) const {
    return done < 5 || (done < Samples() && Seconds(start, Clock::now()) < 2 * f_.runtime);
  }

  // `n` files of one 4 KiB block in directory "files" of disk `d`, 16 threads. Seconds taken.
  double FillDisk(DiskNo d, uint64_t n, bool data) {
    posix::FileSystem* fs = FsOf(d);
    posix::Ino dir = Take(fs->Mkdir(kRootIno, "files", 0755, {}), "mkdir").ino;
    const std::string block(4096, 'h');
    std::atomic<uint64_t> next{0};
    auto start = Clock::now();
    std::vector<std::thread> threads;
    for (int t = 0; t < 16; ++t) {
      threads.emplace_back([&] {
        for (uint64_t i; (i = next.fetch_add(1)) < n;) {
          posix::Ino ino =
              Take(fs->Mknod(dir, "f" + std::to_string(i), S_IFREG | 0644, 0, {}), "mknod").ino;
          if (data) Take(fs->Write(ino, 0, block), "write");
        }
      });
    }
    for (auto& t : threads) t.join();
    return Seconds(start, Clock::now());
  }

  std::vector<double> ReadLoop(posix::FileSystem* fs, posix::Ino ino, char want) {
    for (int i = 0; i < 100; ++i) Take(fs->Read(ino, 0, 4096), "warm-up read");
    std::vector<double> us;
    const size_t n = f_.ops > 0 ? f_.ops : 5000;
    auto start = Clock::now();
    while (us.size() < 100 || (us.size() < n && Seconds(start, Clock::now()) < f_.runtime)) {
      auto t0 = Clock::now();
      std::string got = Take(fs->Read(ino, 0, 4096), "read");
      us.push_back(Seconds(t0, Clock::now()) * 1e6);
      if (got.size() != 4096 || got[0] != want) Die("read returned wrong data");
    }
    return us;
  }

  std::vector<double> ReaddirLoop(posix::FileSystem* fs, posix::Ino dir, uint64_t want) {
    std::vector<double> us;
    auto start = Clock::now();
    for (int rep = 0; rep < 205 && (rep < 25 || Seconds(start, Clock::now()) < f_.runtime); ++rep) {
      auto t0 = Clock::now();
      uint64_t n = 0;
      for (uint64_t cookie = 0;;) {
        posix::DirPage page = Take(fs->ReadDir(dir, cookie, 128), "readdir");
        n += page.entries.size();
        if (page.eof || page.entries.empty()) break;
        cookie = page.entries.back().cookie;
      }
      if (rep >= 5) us.push_back(Seconds(t0, Clock::now()) * 1e6);  // 5 warm-up passes
      if (n != want) Die("readdir listed " + std::to_string(n));
    }
    return us;
  }

  // The 1k and 100k disks' samples alternate (one on each, then again), so both rows see the
  // same moments of the disk: each sample is one synced commit, and this VM's disk has a ~4 ms
  // flush state that comes and goes (docs/measurements.md §8). The synced 4 KiB Write before each
  // sample (to the disk's first file) is timed too, as that moment's floor for a commit.
  void CheckpointAndBranch() {
    struct Side {
      std::string label;
      uint64_t files;
      DiskNo disk{0};
      posix::FileSystem* fs = nullptr;
      posix::Ino ino{0};
      std::vector<double> us, writes;
    };
    Side sides[2];
    sides[0].label = "1k";
    sides[0].files = 1000;
    sides[1].label = "100k";
    sides[1].files = 100000;
    const std::string block(4096, 'c');
    for (Side& side : sides) {
      side.disk = NewDisk();
      double s = FillDisk(side.disk, side.files, true);
      std::printf(
          "# engine checkpoint %s files: setup %llu files (Mknod + 4 KiB Write each) in "
          "%.1f s\n",
          side.label.c_str(), static_cast<unsigned long long>(side.files), s);
      side.fs = FsOf(side.disk);
      posix::Ino dir = Take(side.fs->Lookup(kRootIno, "files"), "lookup").ino;
      side.ino = Take(side.fs->Lookup(dir, "f0"), "lookup f0").ino;
    }
    auto synced_write = [&](Side& side) {
      auto t0 = Clock::now();
      Take(side.fs->Write(side.ino, 0, block), "synced write between samples");
      side.writes.push_back(Seconds(t0, Clock::now()) * 1e6);
    };
    auto report = [&](const char* what, const char* samples) {
      for (Side& side : sides) {
        std::printf(
            "# engine %s %s files: %zu %s; the %s4 KiB Write before each: p50 %.3f ms, p95 "
            "%.3f ms\n",
            what, side.label.c_str(), side.us.size(), samples,
            f_.sync ? "synced " : "(not synced) ", Pct(side.writes, 50) / 1000,
            Pct(side.writes, 95) / 1000);
        PrintLatency(std::string("engine ") + what + " " + side.label + " files", side.us, 4);
        side.us.clear();
        side.writes.clear();
      }
    };

    auto start = Clock::now();
    for (size_t i = 0; More(start, sides[1].us.size()); ++i) {
      for (Side& side : sides) {
        synced_write(side);
        auto t0 = Clock::now();
        Take(engine_->Checkpoint(side.disk, "c" + std::to_string(i)), "checkpoint");
        side.us.push_back(Seconds(t0, Clock::now()) * 1e6);
      }
    }
    report("checkpoint", "checkpoints");
    std::fflush(stdout);

    for (Side& side : sides) Take(engine_->Checkpoint(side.disk, "base"), "checkpoint");
    start = Clock::now();
    while (More(start, sides[1].us.size())) {
      for (Side& side : sides) {
        synced_write(side);
        DiskNo child(next_disk_++);
        auto t0 = Clock::now();
        Check(engine_->CreateBranch(side.disk, "base", child, "b" + std::to_string(child.value())),
              "branch");
        side.us.push_back(Seconds(t0, Clock::now()) * 1e6);
      }
    }
    report("branch", "branches of one checkpoint");
  }

  void ReadDepth() {
    DiskNo root = NewDisk();
    posix::FileSystem* fs = FsOf(root);
    posix::Ino same = NewFileOn(fs, "same");
    posix::Ino changed = NewFileOn(fs, "changed");
    Take(fs->Write(same, 0, std::string(4096, 'r')), "write");
    Take(fs->Write(changed, 0, std::string(4096, 'r')), "write");
    std::vector<double> depth1_same, depth1_changed;
    DiskNo cur = root;
    for (int depth = 1; depth <= 50; ++depth) {
      Take(engine_->Checkpoint(cur, "c"), "checkpoint");
      DiskNo child(next_disk_++);
      Check(engine_->CreateBranch(cur, "c", child, "d" + std::to_string(depth)), "branch");
      cur = child;
      fs = FsOf(cur);
      posix::SetAttrRequest req;
      req.mode = depth % 2 ? 0600 : 0644;
      Take(fs->SetAttr(changed, req), "setattr");
      if (depth != 1 && depth != 10 && depth != 50) continue;
      const std::string d = std::to_string(depth);
      PrintLatency("engine read depth " + d, ReadLoop(fs, same, 'r'), 4);
      PrintLatency("engine read depth " + d + " changed at every level", ReadLoop(fs, changed, 'r'),
                   4);
    }
  }
  posix::Ino NewFileOn(posix::FileSystem* fs, const std::string& name) {
    return Take(fs->Mknod(kRootIno, name, S_IFREG | 0644, 0, {}), "create " + name).ino;
  }

  void HeadVsCheckpoints() {
    DiskNo d = NewDisk();
    FillDisk(d, 1000, false);
    posix::FileSystem* fs = FsOf(d);
    posix::Ino dir = Take(fs->Lookup(kRootIno, "files"), "lookup").ino;
    posix::Ino file = NewFileOn(fs, "r");
    Take(fs->Write(file, 0, std::string(4096 * 4, 'r')), "write");
    int taken = 0;
    for (int target : {0, 100, 1000}) {
      auto start = Clock::now();
      for (; taken < target; ++taken) {
        Take(fs->Write(file, 4096 * (taken % 4), std::string(4096, 'r')), "write");
        Take(fs->Mknod(dir, "x", S_IFREG | 0644, 0, {}), "mknod");
        Check(fs->Unlink(dir, "x"), "unlink");
        Take(engine_->Checkpoint(d, "h" + std::to_string(taken)), "checkpoint");
      }
      if (target > 0) {
        std::printf("# engine head %d checkpoints: setup %.1f s\n", target,
                    Seconds(start, Clock::now()));
      }
      const std::string t = std::to_string(target);
      // RocksDB's table files at this point (a Get looks in each L0 file whose bloom filter
      // passes): a reason a head read could slow down with history while making the same Gets.
      uint64_t ssts = 0, bytes = 0;
      for (const auto& e : std::filesystem::directory_iterator(f_.dir + "/engine/db")) {
        if (e.path().extension() != ".sst") continue;
        ++ssts;
        bytes += e.file_size();
      }
      std::printf("# engine head %d checkpoints: RocksDB holds %llu .sst files, %.1f MiB\n", target,
                  static_cast<unsigned long long>(ssts), D(bytes) / 1048576);
      PrintLatency("engine head read " + t + " checkpoints", ReadLoop(fs, file, 'r'), 4);
      PrintLatency("engine readdir " + t + " checkpoints", ReaddirLoop(fs, dir, 1000), 4);
      std::fflush(stdout);
    }
  }

  void HistoryRows() {
    CheckpointAndBranch();
    std::fflush(stdout);
    ReadDepth();
    std::fflush(stdout);
    HeadVsCheckpoints();
  }

  const Flags f_;
  std::unique_ptr<Engine> engine_;
  posix::FileSystem* fs_ = nullptr;
  posix::Ino seq_ino_{0};
  uint64_t next_disk_ = 1000;  // history rows
};

void Usage() {
  std::printf(
      "usage: engine_bench --dir DIR [--rows write1,writers,seq,read,meta,history] [--runtime S]\n"
      "                    [--ops N] [--writers N] [--seq-mib N] [--seq-threads N]\n"
      "                    [--readdir-n N] [--no-sync] [--tier]\n"
      "  --tier           the engine as a tier runs it: every commit also logged to the outbox\n"
      "  --rows           also history-ckpt, history-depth, history-head: parts of history\n"
      "  --dir DIR        a fresh directory on the disk to measure (DIR/engine is created)\n"
      "  --runtime S      seconds per timed row (default 10)\n"
      "  --ops N          write1 runs N writes instead of --runtime seconds; history: N\n"
      "                   samples per row instead of up to 500 (5000 reads) in --runtime\n"
      "  --writers N      threads of the writers row (default 8)\n"
      "  --seq-mib N      size of the seq file, also read by the read row (default 1024)\n"
      "  --seq-threads N  1 MiB writes in flight in the seq row (default 64)\n"
      "  --readdir-n N    entries of the readdir directory (default 100000)\n"
      "  --no-sync        EngineOptions::sync = false: commits are not synced (the engine's own\n"
      "                   cost, without the disk's flush; not what the targets are about)\n");
}

int Main(int argc, char** argv) {
  Flags f;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) Die(a + " needs a value");
      return argv[++i];
    };
    if (a == "--help" || a == "-h") {
      Usage();
      return 0;
    } else if (a == "--dir") {
      f.dir = value();
    } else if (a == "--rows") {
      f.rows = value();
    } else if (a == "--runtime") {
      f.runtime = std::stod(value());
    } else if (a == "--ops") {
      f.ops = std::stoull(value());
    } else if (a == "--writers") {
      f.writers = std::stoi(value());
    } else if (a == "--seq-mib") {
      f.seq_mib = std::stoull(value());
    } else if (a == "--seq-threads") {
      f.seq_threads = std::stoi(value());
    } else if (a == "--no-sync") {
      f.sync = false;
    } else if (a == "--tier") {
      f.tier = true;
    } else if (a == "--readdir-n") {
      f.readdir_n = std::stoull(value());
    } else {
      Die("unknown argument '" + a + "' (try --help)");
    }
  }
  if (f.dir.empty()) Die("--dir is required (try --help)");
  if (f.dir[0] != '/') Die("--dir must be absolute");
  Bench(f).Run();
  return 0;
}

}  // namespace
}  // namespace archil::engine

int main(int argc, char** argv) { return archil::engine::Main(argc, argv); }
