// segment_append: what appending to a local segment file costs when every record is made durable
// before the reply, by record size (4 KiB, 64 KiB, 1 MiB) and by how the file was laid out:
//   growing     : O_TRUNC file, pwrite at the end + fdatasync (i_size changes: a journal commit)
//   fallocated  : fallocate()d up front (unwritten extents) + pwrite + fdatasync
//   prewritten  : file already written and synced once (a recycled segment / intent log)
//                 + pwrite + fdatasync: a pure data overwrite
//   prewritten O_DIRECT|O_DSYNC : same file, one aligned pwrite per record and no separate sync
//                 (the preallocated intent log's record, docs/architecture.md §2.3)
//   buffered, one sync : pwrite every record, a single fdatasync at the end (bulk/seal path)
// Prints MiB/s and per-record (write + sync) latency p50/p95/p99 in us, then runs fio sequential
// 1 MiB writes (buffered + end_fsync, and direct) on the same directory for comparison.
//
// Each case writes 2000 x 4 KiB, 1000 x 64 KiB and --mib x 1 MiB records to a fresh file.
//
// Usage: segment_append [--dir /var/tmp] [--mib 1024] [--no-fio]

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

double Pct(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t rank = static_cast<size_t>((v.size() * p + 99) / 100);
  return v[std::clamp<size_t>(rank, 1, v.size()) - 1];
}

void Check(bool ok, const char* what) {
  if (!ok) {
    std::perror(what);
    std::exit(1);
  }
}

enum class Layout { kGrowing, kFallocated, kPrewritten };

// Creates the segment file with the given layout and returns an fd opened with `flags`.
int MakeSegment(const std::string& path, Layout layout, size_t bytes, int flags) {
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
  Check(fd >= 0, "open");
  if (layout == Layout::kFallocated) Check(fallocate(fd, 0, 0, bytes) == 0, "fallocate");
  if (layout == Layout::kPrewritten) {
    std::vector<char> zero(1 << 20, 0);
    for (size_t off = 0; off < bytes; off += zero.size())
      Check(pwrite(fd, zero.data(), std::min(zero.size(), bytes - off), off) > 0, "prefill");
    Check(fsync(fd) == 0, "fsync");
  }
  close(fd);
  fd = open(path.c_str(), O_RDWR | flags);
  Check(fd >= 0, "reopen");
  return fd;
}

struct Case {
  const char* name;
  Layout layout;
  int open_flags;
  bool sync_each;
};

void Run(const std::string& dir, const Case& c, size_t rec, size_t total) {
  const std::string path = dir + "/segment";
  const size_t n = total / rec;
  int fd = MakeSegment(path, c.layout, total, c.open_flags);
  void* buf = nullptr;
  Check(posix_memalign(&buf, 4096, rec) == 0, "posix_memalign");
  std::memset(buf, 'd', rec);
  std::vector<double> lat;
  lat.reserve(n);
  auto t0 = Clock::now();
  for (size_t i = 0; i < n; ++i) {
    auto a = Clock::now();
    Check(pwrite(fd, buf, rec, i * rec) == static_cast<ssize_t>(rec), "pwrite");
    if (c.sync_each) Check(fdatasync(fd) == 0, "fdatasync");
    lat.push_back(std::chrono::duration<double, std::micro>(Clock::now() - a).count());
  }
  if (!c.sync_each) Check(fdatasync(fd) == 0, "fdatasync");
  double secs = std::chrono::duration<double>(Clock::now() - t0).count();
  close(fd);
  unlink(path.c_str());
  free(buf);
  std::printf("%-38s %6zuK %6zu %8.0f %8.0f %8.0f %8.0f\n", c.name, rec >> 10, n,
              total / secs / (1 << 20), Pct(lat, 50), Pct(lat, 95), Pct(lat, 99));
  std::fflush(stdout);
}

// fio sequential 1 MiB writes of a fresh 1 GiB file; prints fio's bandwidth in MiB/s.
void Fio(const std::string& dir, const char* name, const char* extra) {
  std::string file = dir + "/fio-seq";
  std::string cmd = "fio --name=seq --filename=" + file +
                    " --size=1G --rw=write --bs=1M --output-format=json " + extra +
                    " | jq -r '.jobs[0].write.bw_bytes / 1048576'";
  FILE* p = popen(cmd.c_str(), "r");
  double mibs = 0;
  bool ok = p && std::fscanf(p, "%lf", &mibs) == 1;
  if (p) pclose(p);
  unlink(file.c_str());
  if (ok)
    std::printf("%-38s %7s %6s %8.0f   (fio ... %s)\n", name, "1024K", "1024", mibs, extra);
  else
    std::printf("%-38s fio failed (fio and jq installed?)\n", name);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir = "/var/tmp";
  size_t mib = 1024;
  bool fio = true;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--dir" && i + 1 < argc)
      dir = argv[++i];
    else if (a == "--mib" && i + 1 < argc)
      mib = std::stoul(argv[++i]);
    else if (a == "--no-fio")
      fio = false;
    else {
      std::fprintf(stderr, "usage: segment_append [--dir D] [--mib N] [--no-fio]\n");
      return 2;
    }
  }
  std::string tmpl = dir + "/segment_append.XXXXXX";
  Check(mkdtemp(tmpl.data()) != nullptr, "mkdtemp");
  const std::string work = tmpl;
  const Case cases[] = {
      {"growing pwrite+fdatasync", Layout::kGrowing, 0, true},
      {"fallocated pwrite+fdatasync", Layout::kFallocated, 0, true},
      {"prewritten pwrite+fdatasync", Layout::kPrewritten, 0, true},
      {"prewritten O_DIRECT|O_DSYNC pwrite", Layout::kPrewritten, O_DIRECT | O_DSYNC, false},
      {"growing buffered, 1 sync (lat=pwrite)", Layout::kGrowing, 0, false},
  };
  std::printf("dir %s; latency = one record's write + sync\n", work.c_str());
  std::printf("%-38s %7s %6s %8s %8s %8s %8s\n", "case", "record", "n", "MiB/s", "p50_us", "p95_us",
              "p99_us");
  for (const Case& c : cases) {
    Run(work, c, size_t(4) << 10, size_t(2000) << 12);
    Run(work, c, size_t(64) << 10, size_t(1000) << 16);
    Run(work, c, size_t(1) << 20, mib << 20);
  }
  if (fio) {
    std::printf(
        "fio --name=seq --filename=F --size=1G --rw=write --bs=1M --output-format=json ... "
        "| jq -r '.jobs[0].write.bw_bytes / 1048576'\n");
    Fio(work, "fio seq write, buffered+end_fsync", "--end_fsync=1");
    Fio(work, "fio seq write, direct", "--direct=1");
  }
  rmdir(work.c_str());
  return 0;
}
