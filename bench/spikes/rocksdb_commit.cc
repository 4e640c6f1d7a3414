// rocksdb_commit: how long does a synced 4 KiB commit through RocksDB's WAL take, and is it
// within 30 us of the local disk's own O_SYNC floor?
//
// Opens a fresh RocksDB (the static Debian 7.8.3 library) in a new directory under --dir, with the
// options docs/formats.md §3 pins (256 MiB block cache, bloom filter, cached+pinned index/filter
// blocks, max_background_jobs=2, no direct reads), and times WriteOptions{sync=true} writes of
//   put   : one Put of a 4 KiB value,
//   batch : one WriteBatch of an inode record (128 B), an extent record (40 B) and 4 KiB of
//           inline data (the "small sync write rides in the commit record" path),
// first with one writer, then with 8 concurrent writers (group commit). Prints p50/p95/p99 in us,
// ops/s, and WAL syncs per write (RocksDB statistics; < 1 means group commit merged writes).
// Each case runs --repeat times on its own fresh DB. It also prints the effective
// recycle_log_file_num for each WAL recovery mode (7.8.3 silently drops it to 0 unless the mode
// is kSkipAnyCorruptedRecords) and, as the floor, the O_SYNC fio line of Archil's published latency
// script (https://docs.archil.com/reference/limits.md#latency) run verbatim on a
// fresh file in the same directory (runtime shortened by --fio-runtime; 0 skips it).
//
// Usage: rocksdb_commit [--dir /var/tmp] [--ops 4000] [--repeat 3] [--fio-runtime 10]
//                       [--recovery-mode 2] [--recycle 4] [--write-buffer-mb 64]
// With 4000 x 4 KiB < 64 MiB no memtable flush happens, so no WAL is ever recycled; to see a
// recycled WAL, use e.g. --write-buffer-mb 1 --recovery-mode 3 (3 = kSkipAnyCorruptedRecords,
// which is ruled out for production, docs/formats.md §3: it can drop acknowledged writes).
// Each repeat runs the fio floor first and then every case, so floor and cases are paired in time.

#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/statistics.h>
#include <rocksdb/table.h>
#include <rocksdb/write_batch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

struct Config {
  std::string dir = "/var/tmp";
  int ops = 4000;  // per case, split across writers
  int repeat = 3;
  int fio_runtime = 10;
  int recovery_mode = 2;     // kPointInTimeRecovery, RocksDB's default
  size_t recycle = 4;        // what we ask for; RocksDB may sanitize it away
  int write_buffer_mb = 64;  // RocksDB's default; small values roll (and can recycle) WALs
};

// Nearest-rank percentile, the same rule as the latency script's pct().
double Pct(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t rank = static_cast<size_t>((v.size() * p + 99) / 100);
  return v[std::clamp<size_t>(rank, 1, v.size()) - 1];
}

rocksdb::Options MakeOptions(const Config& cfg, int recovery_mode) {
  rocksdb::BlockBasedTableOptions t;
  t.block_cache = rocksdb::NewLRUCache(256 << 20);
  t.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
  t.cache_index_and_filter_blocks = true;
  t.pin_l0_filter_and_index_blocks_in_cache = true;
  rocksdb::Options o;
  o.create_if_missing = true;
  o.table_factory.reset(rocksdb::NewBlockBasedTableFactory(t));
  o.max_background_jobs = 2;
  o.use_direct_reads = false;
  o.recycle_log_file_num = cfg.recycle;
  o.wal_recovery_mode = static_cast<rocksdb::WALRecoveryMode>(recovery_mode);
  o.write_buffer_size = size_t(cfg.write_buffer_mb) << 20;
  o.statistics = rocksdb::CreateDBStatistics();
  return o;
}

std::unique_ptr<rocksdb::DB> Open(const rocksdb::Options& o, const std::string& path) {
  rocksdb::DB* db = nullptr;
  rocksdb::Status s = rocksdb::DB::Open(o, path, &db);
  if (!s.ok()) {
    std::fprintf(stderr, "DB::Open(%s): %s\n", path.c_str(), s.ToString().c_str());
    std::exit(1);
  }
  return std::unique_ptr<rocksdb::DB>(db);
}

std::string Key(int writer, int i) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "d%02d/%08d", writer, i);
  return buf;
}

struct Result {
  std::vector<double> lat_us;
  double secs = 0;
  uint64_t wal_syncs = 0, writes = 0;
};

// One case on a fresh DB: `writers` threads each do ops/writers synced writes.
Result RunCase(const Config& cfg, const std::string& path, bool batch, int writers) {
  rocksdb::Options o = MakeOptions(cfg, cfg.recovery_mode);
  auto db = Open(o, path);
  const std::string value(4096, 'x'), inode(128, 'i'), extent(40, 'e');
  rocksdb::WriteOptions wo;
  wo.sync = true;
  auto write = [&](int w, int i) {
    rocksdb::Status s;
    if (batch) {
      rocksdb::WriteBatch b;
      b.Put("i/" + Key(w, i), inode);
      b.Put("e/" + Key(w, i), extent);
      b.Put("x/" + Key(w, i), value);
      s = db->Write(wo, &b);
    } else {
      s = db->Put(wo, Key(w, i), value);
    }
    if (!s.ok()) {
      std::fprintf(stderr, "write: %s\n", s.ToString().c_str());
      std::exit(1);
    }
  };
  for (int i = 0; i < 50; ++i) write(99, i);  // warm-up: WAL file creation, first allocation
  o.statistics->Reset();

  const int per = cfg.ops / writers;
  std::vector<std::vector<double>> lat(writers);
  auto t0 = Clock::now();
  std::vector<std::thread> th;
  for (int w = 0; w < writers; ++w) {
    th.emplace_back([&, w] {
      lat[w].reserve(per);
      for (int i = 0; i < per; ++i) {
        auto a = Clock::now();
        write(w, i);
        lat[w].push_back(std::chrono::duration<double, std::micro>(Clock::now() - a).count());
      }
    });
  }
  for (auto& t : th) t.join();
  Result r;
  r.secs = std::chrono::duration<double>(Clock::now() - t0).count();
  for (auto& v : lat) r.lat_us.insert(r.lat_us.end(), v.begin(), v.end());
  r.wal_syncs = o.statistics->getTickerCount(rocksdb::WAL_FILE_SYNCED);
  r.writes = o.statistics->getTickerCount(rocksdb::WRITE_DONE_BY_SELF) +
             o.statistics->getTickerCount(rocksdb::WRITE_DONE_BY_OTHER);
  db.reset();
  std::filesystem::remove_all(path);
  return r;
}

void PrintRecycle(const Config& cfg, const std::string& base) {
  static const char* kModes[] = {"kTolerateCorruptedTailRecords", "kAbsoluteConsistency",
                                 "kPointInTimeRecovery", "kSkipAnyCorruptedRecords"};
  std::printf("recycle_log_file_num requested %zu; effective per wal_recovery_mode:\n",
              cfg.recycle);
  for (int m = 0; m < 4; ++m) {
    std::string path = base + "/recycle" + std::to_string(m);
    auto db = Open(MakeOptions(cfg, m), path);
    std::printf("  %d %-30s -> %zu%s\n", m, kModes[m], db->GetDBOptions().recycle_log_file_num,
                m == cfg.recovery_mode ? "   (used below)" : "");
    db.reset();
    std::filesystem::remove_all(path);
  }
}

// The latency script's O_SYNC write line, verbatim except --runtime, on a fresh file; clat
// p50/p95/p99 in us.
bool FioFloor(const Config& cfg, const std::string& base, double* p50, double* p95, double* p99) {
  std::string file = base + "/fio-w";
  std::string cmd =
      "fio --name=t --bs=4k --iodepth=1 --direct=1 --time_based --runtime=" +
      std::to_string(cfg.fio_runtime) + " --output-format=json --filename=" + file +
      " --size=1G --rw=randwrite --sync=1 | jq -r '.jobs[0].write.clat_ns.percentile | "
      "\"\\(.[\"50.000000\"] / 1e3) \\(.[\"95.000000\"] / 1e3) \\(.[\"99.000000\"] / 1e3)\"'";
  FILE* p = popen(cmd.c_str(), "r");
  bool ok = p && std::fscanf(p, "%lf %lf %lf", p50, p95, p99) == 3;
  if (p) pclose(p);
  std::filesystem::remove(file);
  if (!ok) std::fprintf(stderr, "fio floor failed (are fio and jq installed?): %s\n", cmd.c_str());
  return ok;
}

double Median(std::vector<double> v) { return Pct(std::move(v), 50); }

}  // namespace

int main(int argc, char** argv) {
  Config cfg;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i], v = argv[i + 1];
    if (a == "--dir")
      cfg.dir = v;
    else if (a == "--ops")
      cfg.ops = std::stoi(v);
    else if (a == "--repeat")
      cfg.repeat = std::stoi(v);
    else if (a == "--fio-runtime")
      cfg.fio_runtime = std::stoi(v);
    else if (a == "--recovery-mode")
      cfg.recovery_mode = std::stoi(v);
    else if (a == "--recycle")
      cfg.recycle = std::stoul(v);
    else if (a == "--write-buffer-mb")
      cfg.write_buffer_mb = std::stoi(v);
    else {
      std::fprintf(stderr, "unknown flag %s\n", a.c_str());
      return 2;
    }
  }
  std::string tmpl = cfg.dir + "/rocksdb_commit.XXXXXX";
  if (!mkdtemp(tmpl.data())) {
    std::perror(tmpl.c_str());
    return 1;
  }
  const std::string base = tmpl;
  std::printf("RocksDB %d.%d.%d (static), dir %s, %d synced writes per case, %d repeats\n",
              ROCKSDB_MAJOR, ROCKSDB_MINOR, ROCKSDB_PATCH, base.c_str(), cfg.ops, cfg.repeat);
  std::printf(
      "options: block cache 256 MiB, bloom 10 bits, cache+pin index/filter, "
      "max_background_jobs=2, use_direct_reads=false, write_buffer_size %d MiB\n",
      cfg.write_buffer_mb);
  PrintRecycle(cfg, base);

  std::printf("\n%-28s %7s %5s %8s %8s %8s %9s %11s\n", "case", "writers", "rep", "p50_us",
              "p95_us", "p99_us", "ops/s", "syncs/write");
  // Each repeat runs the fio floor first, so every case has a floor taken under similar load.
  const char* kFloor = "fio O_SYNC 4k fresh (floor)";
  std::map<std::string, std::vector<double>> p50s, p95s;
  std::vector<std::string> order;
  auto record = [&](const std::string& name, double p50, double p95) {
    if (!p50s.count(name)) order.push_back(name);
    p50s[name].push_back(p50);
    p95s[name].push_back(p95);
  };
  for (int rep = 1; rep <= cfg.repeat; ++rep) {
    double f50, f95, f99;
    if (cfg.fio_runtime > 0 && FioFloor(cfg, base, &f50, &f95, &f99)) {
      std::printf("%-28s %7d %5d %8.0f %8.0f %8.0f %9s %11s\n", kFloor, 1, rep, f50, f95, f99, "-",
                  "-");
      record(kFloor, f50, f95);
    }
    for (int writers : {1, 8}) {
      for (bool batch : {false, true}) {
        std::string name = std::string(batch ? "batch inode+extent+4KiB" : "put 4KiB") + " x" +
                           std::to_string(writers);
        Result r = RunCase(cfg, base + "/db", batch, writers);
        std::printf("%-28s %7d %5d %8.0f %8.0f %8.0f %9.0f %11.2f\n", name.c_str(), writers, rep,
                    Pct(r.lat_us, 50), Pct(r.lat_us, 95), Pct(r.lat_us, 99),
                    r.lat_us.size() / r.secs,
                    r.writes ? double(r.wal_syncs) / double(r.writes) : 0.0);
        record(name, Pct(r.lat_us, 50), Pct(r.lat_us, 95));
        std::fflush(stdout);
      }
    }
  }
  std::printf("\nsummary over %d repeats: median [min..max] of the per-repeat p50 and p95, us\n",
              cfg.repeat);
  for (const std::string& name : order) {
    auto& a = p50s[name];
    auto& b = p95s[name];
    std::printf("%-28s p50 %5.0f [%4.0f..%4.0f]   p95 %5.0f [%4.0f..%4.0f]", name.c_str(),
                Median(a), *std::min_element(a.begin(), a.end()),
                *std::max_element(a.begin(), a.end()), Median(b),
                *std::min_element(b.begin(), b.end()), *std::max_element(b.begin(), b.end()));
    if (name.ends_with(" x1") && p50s[kFloor].size() == a.size()) {
      // Paired per repeat (the floor ran just before the case), then the median of the pairs.
      std::vector<double> d;
      for (size_t i = 0; i < a.size(); ++i) d.push_back(a[i] - p50s[kFloor][i]);
      std::printf("   p50 - floor p50, paired: %+.0f [%+.0f..%+.0f]", Median(d),
                  *std::min_element(d.begin(), d.end()), *std::max_element(d.begin(), d.end()));
    }
    std::printf("\n");
  }
  std::filesystem::remove_all(base);
  return 0;
}
