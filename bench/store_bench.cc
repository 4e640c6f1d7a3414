// store_bench: S3Store (src/store/s3_store.h) against an S3 endpoint, for bench/tiering.sh: the
// upload throughput of sealed segments, the requests each GiB costs, and cold 4 KiB ranged reads.
//
//   store_bench --endpoint URL [--bucket B] [--access-key K --secret-key S] [--dir DIR]
//               [--segments N] [--segment-mib M] [--in-flight F] [--reads R]
//
// Rows (one line each, "ROW: ..." as every bench script prints them; '#' lines are details):
//   floor, empty request (HEAD of a missing key)   a round trip with no body: the store's
//                                                  first-byte latency plus loopback
//   upload, M MiB segments, F in flight            PutFile of N segments (multipart, 4 parts in
//                                                  flight each), F segments at a time; MiB/s
//   requests per GiB uploaded                      every request S3Store sent, retries included
//   cold 4 KiB read                                Get of 4 KiB at random block offsets of the
//                                                  uploaded objects, one at a time
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "store/s3_store.h"

namespace archil::store {
namespace {

using Clock = std::chrono::steady_clock;

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "store_bench: %s\n", what.c_str());
  std::_Exit(1);
}

double Pct(std::vector<double> v, int p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t rank = (v.size() * p + 99) / 100;
  return v[std::max<size_t>(rank, 1) - 1];
}

void PrintLatency(const std::string& row, const std::vector<double>& us) {
  std::printf("%s: p50 %.3f ms, p95 %.3f ms\n", row.c_str(), Pct(us, 50) / 1000,
              Pct(us, 95) / 1000);
}

double Us(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::micro>(b - a).count();
}

int Run(int argc, char** argv) {
  S3Config c;
  c.bucket = "archil";
  c.credentials = {"archil-test", "archil-test-secret", ""};
  std::string dir = "/var/tmp";
  int segments = 16, in_flight = 1, reads = 200;
  uint64_t segment_mib = 64;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) Die("flag " + a + " needs a value");
    const std::string v = argv[++i];
    if (a == "--endpoint")
      c.endpoint = v;
    else if (a == "--bucket")
      c.bucket = v;
    else if (a == "--access-key")
      c.credentials.access_key_id = v;
    else if (a == "--secret-key")
      c.credentials.secret_access_key = v;
    else if (a == "--dir")
      dir = v;
    else if (a == "--segments")
      segments = std::stoi(v);
    else if (a == "--segment-mib")
      segment_mib = std::stoull(v);
    else if (a == "--in-flight")
      in_flight = std::stoi(v);
    else if (a == "--reads")
      reads = std::stoi(v);
    else if (a == "--payload" && (v == "signed" || v == "unsigned"))
      c.payload = v == "signed" ? S3Config::Payload::kSigned : S3Config::Payload::kUnsigned;
    else
      Die("unknown flag " + a);
  }
  if (c.endpoint.empty()) Die("--endpoint is required");
  auto opened = S3Store::Open(c);
  if (!opened.ok()) Die("open: " + opened.status().ToString());
  S3Store& s = **opened;
  std::printf("# store: %s, conditions %s\n", s.Describe().c_str(),
              s.EnforcesConditions() ? "enforced" : "ignored");

  // The floor: a request with no body.
  std::vector<double> floor_us;
  for (int i = 0; i < 50; ++i) {
    const auto t0 = Clock::now();
    (void)s.Head("bench/absent");
    floor_us.push_back(Us(t0, Clock::now()));
  }
  PrintLatency("floor, empty request (HEAD of a missing key)", floor_us);

  // One segment file, uploaded under N keys.
  const uint64_t size = segment_mib << 20;
  const std::string path = dir + "/store_bench." + std::to_string(getpid());
  {
    const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) Die("create " + path + ": " + std::strerror(errno));
    std::string block(1 << 20, '\0');
    std::mt19937_64 rng(42);
    for (uint64_t m = 0; m < segment_mib; ++m) {
      for (size_t j = 0; j < block.size(); j += 8) {
        const uint64_t x = rng();
        std::memcpy(&block[j], &x, 8);
      }
      if (write(fd, block.data(), block.size()) != static_cast<ssize_t>(block.size())) {
        Die("write " + path);
      }
    }
    fsync(fd);
    close(fd);
  }
  const uint64_t req0 = s.requests(), retries0 = s.retries();
  std::atomic<int> next{0};
  std::atomic<bool> failed{false};
  const auto t0 = Clock::now();
  std::vector<std::thread> threads;
  for (int t = 0; t < in_flight; ++t) {
    threads.emplace_back([&] {
      for (int i = next.fetch_add(1); i < segments; i = next.fetch_add(1)) {
        auto up = s.PutFile("bench/seg/" + std::to_string(getpid()) + "/" + std::to_string(i), path,
                            size);
        if (!up.ok()) {
          std::fprintf(stderr, "store_bench: upload %d: %s\n", i, up.status().ToString().c_str());
          failed = true;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  const double secs = Us(t0, Clock::now()) / 1e6;
  unlink(path.c_str());
  if (failed) Die("an upload failed");
  const double mib = static_cast<double>(size) * segments / (1 << 20);
  std::printf("# %d segments of %llu MiB in %.2f s; %llu requests, %llu retries\n", segments,
              static_cast<unsigned long long>(segment_mib), secs,
              static_cast<unsigned long long>(s.requests() - req0),
              static_cast<unsigned long long>(s.retries() - retries0));
  std::printf("upload, %llu MiB segments, %d in flight: %.0f MiB/s\n",
              static_cast<unsigned long long>(segment_mib), in_flight, mib / secs);
  std::printf("upload, %llu MiB segments, %d in flight: %.1f MB/s\n",
              static_cast<unsigned long long>(segment_mib), in_flight,
              static_cast<double>(size) * segments / 1e6 / secs);
  std::printf("requests per GiB uploaded: %.0f\n",
              static_cast<double>(s.requests() - req0) / (mib / 1024));

  // Cold reads: 4 KiB at random block offsets of random uploaded segments.
  std::vector<double> read_us;
  std::mt19937_64 rng(7);
  for (int i = 0; i < reads; ++i) {
    const int seg = static_cast<int>(rng() % static_cast<uint64_t>(segments));
    const uint64_t off = (rng() % (size / 4096)) * 4096;
    const auto r0 = Clock::now();
    auto got =
        s.Get("bench/seg/" + std::to_string(getpid()) + "/" + std::to_string(seg), off, 4096);
    read_us.push_back(Us(r0, Clock::now()));
    if (!got.ok() || got->size() != 4096) Die("cold read failed");
  }
  PrintLatency("cold 4 KiB read (ranged GET)", read_us);
  for (int i = 0; i < segments; ++i) {
    (void)s.Delete("bench/seg/" + std::to_string(getpid()) + "/" + std::to_string(i));
  }
  return 0;
}

}  // namespace
}  // namespace archil::store

int main(int argc, char** argv) { return archil::store::Run(argc, argv); }
