// The tier end to end: `archil server --object-store s3://...` on s3rver (an independent S3
// implementation), real FUSE mounts, and a disk that survives the loss of its server's data
// directory through the bucket.
//
//  - A stopped server's disk, checkpoint and branch come back on a fresh server (the data
//    directory wiped), byte for byte, and mount with their old tokens.
//  - kill -9 in the middle of fsynced writes, then a fresh server on the bucket as the kill left
//    it: what it serves is a prefix of what was acknowledged, and holds everything acknowledged
//    well before the kill (the recovery point, docs/tiering.md §7).
//  - An owner paused while another server takes its bucket over: once resumed it acknowledges
//    nothing, and nothing it writes is read by the new owner or a later recovery.
//  - The object store unreachable (s3rver stopped) under fsynced writes: the writers wait while
//    the lease has lapsed and never fail, the API says so per disk, and once the store answers
//    again writes and uploads resume by themselves; nothing acknowledged is lost.
// Needs root, /dev/fuse and s3rver (CI requires them: ARCHIL_REQUIRE_FUSE, ARCHIL_REQUIRE_S3RVER).
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <new>
#include <random>
#include <thread>

#include "metrics_scrape.h"
#include "mount_harness.h"
#include "s3_fake.h"
#include "s3rver_process.h"

namespace archil::testing {
namespace {

class TierTest : public MountTest {
 protected:
  void SetUp() override {
    MountTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    Result<std::unique_ptr<S3rverProcess>> s3 = S3rverProcess::Start((dir_ / "s3").string(), "bkt");
    if (!s3.ok() && s3.status().code() == Status::Code::kNotFound && !S3rverRequired()) {
      GTEST_SKIP() << "s3rver is not installed (npm ci)";
    }
    ASSERT_TRUE(s3.ok()) << s3.status().ToString();
    s3_ = std::move(*s3);
    store_ = "s3://bkt/tier-e2e?endpoint=http://127.0.0.1:" + std::to_string(s3_->port()) +
             "&region=us-east-1";
    env_["AWS_ACCESS_KEY_ID"] = "S3RVER";
    env_["AWS_SECRET_ACCESS_KEY"] = "S3RVER";
  }
  // A short lease: a server that starts on a killed one's bucket waits for it to lapse.
  void StartTiered() { StartServer({"--object-store", store_, "--lease-seconds", "2"}); }
  // The same, serving its metrics; returns their address.
  std::string StartTieredWithMetrics() {
    const std::string metrics = "127.0.0.1:" + std::to_string(FreePort());
    StartServer({"--object-store", store_, "--lease-seconds", "2", "--metrics-listen", metrics});
    return metrics;
  }
  // The data directory is lost: what the server had is only in the bucket now.
  void WipeData() {
    std::error_code ec;
    fs::remove_all(data_dir_, ec);
    ASSERT_FALSE(ec) << ec.message();
  }
  // "relative path -> bytes" of every file under `root`.
  static std::map<std::string, std::string> Files(const std::string& root) {
    std::map<std::string, std::string> out;
    for (const auto& e : fs::recursive_directory_iterator(root)) {
      if (e.is_regular_file()) out[fs::relative(e.path(), root).string()] = Slurp(e.path());
    }
    return out;
  }
  static bool WriteFileSynced(const std::string& path, const std::string& data) {
    int fd = open(path.c_str(), O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return false;
    bool ok =
        write(fd, data.data(), data.size()) == static_cast<ssize_t>(data.size()) && fsync(fd) == 0;
    return close(fd) == 0 && ok;
  }
  std::unique_ptr<S3rverProcess> s3_;
  std::unique_ptr<S3Fake> fake_;  // the strict fake, for the tests that need S3's conditions
  std::string store_;
};

// The server counts its object store's calls (archil_store_*): on a healthy s3rver, the lease
// and the log's shipping are puts that end OK, with their bytes and seconds, and none errs.
TEST_F(TierTest, TheObjectStoresCallsAreCounted) {
  const std::string metrics = StartTieredWithMetrics();
  CreateDisk("counted");
  ASSERT_EQ(Mount("counted").exit_code, 0);
  ASSERT_TRUE(WriteFileSynced(mnt_ + "/f", std::string(1 << 20, 'c')));
  const std::string puts = R"(archil_store_requests_total{kind="put",outcome="ok"})";
  std::string text;
  for (int i = 0; i < 100; ++i) {  // the log ships within a second or two
    text = ScrapeMetrics(metrics);
    if (MetricValue(text, puts) >= 3 && MetricValue(text, "archil_store_sent_bytes_total") > 0) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_GE(MetricValue(text, puts), 3) << text;
  EXPECT_GT(MetricValue(text, "archil_store_sent_bytes_total"), 0);
  EXPECT_GT(MetricValue(text, R"(archil_store_request_seconds_total{kind="put"})"), 0);
  for (const char* kind : {"put", "put_file", "get", "head", "list", "delete"}) {
    EXPECT_EQ(MetricValue(text, std::string(R"(archil_store_requests_total{kind=")") + kind +
                                    R"(",outcome="error"})"),
              0)
        << kind;
  }
}

TEST_F(TierTest, AFreshServerRecoversItsDisksFromTheBucketAndMountsThemWithTheirTokens) {
  StartTiered();
  CreateDisk("tdisk");
  const std::string token = env_["ARCHIL_MOUNT_TOKEN"];
  ASSERT_EQ(Mount("tdisk").exit_code, 0);
  // 500 files, about 20 MB, in a few directories.
  std::mt19937_64 rng(7);
  for (int d = 0; d < 5; ++d) fs::create_directories(mnt_ + "/d" + std::to_string(d));
  for (int i = 0; i < 500; ++i) {
    std::string data(1 + rng() % 80000, '\0');
    for (char& c : data) c = static_cast<char>(rng());
    std::ofstream(mnt_ + "/d" + std::to_string(i % 5) + "/f" + std::to_string(i), std::ios::binary)
        << data;
  }
  ASSERT_EQ(Archil({"checkpoints", "create", mnt_, "cp1"}).exit_code, 0);
  std::ofstream(mnt_ + "/after-cp") << "written after the checkpoint";
  const auto before = Files(mnt_);
  ASSERT_EQ(before.size(), 501u);
  Ran branch = Archil({"--json", "branches", "create", "tdisk", "br1", "--from-checkpoint", "cp1"});
  ASSERT_EQ(branch.exit_code, 0) << branch.err;
  json b = json::parse(branch.out, nullptr, false);
  const std::string branch_disk = b.is_object() ? b.value("filesystem_id", "") : "";
  ASSERT_FALSE(branch_disk.empty()) << branch.out;
  ASSERT_EQ(Archil({"unmount", mnt_}).exit_code, 0);
  EXPECT_EQ(StopServer(), 0);  // drains: everything to the bucket

  WipeData();
  StartTiered();
  const std::string log = ReadFile(dir_ / "server.log");
  EXPECT_NE(log.find("tier: recovered"), std::string::npos) << log;
  // The old token mounts the recovered disk, which holds every byte.
  env_["ARCHIL_MOUNT_TOKEN"] = token;
  Ran mounted = Mount("tdisk");
  ASSERT_EQ(mounted.exit_code, 0) << mounted.err;
  EXPECT_TRUE(Files(mnt_) == before) << "the recovered disk differs";
  Ran cps = Archil({"--json", "checkpoints", "list", "tdisk"});
  EXPECT_NE(cps.out.find("cp1"), std::string::npos) << cps.out << cps.err;
  ASSERT_EQ(Archil({"unmount", mnt_}).exit_code, 0);
  // The branch too: the checkpoint's files, not what came after it.
  Ran br = Mount(branch_disk);
  ASSERT_EQ(br.exit_code, 0) << br.err;
  auto in_branch = Files(mnt_);
  EXPECT_EQ(in_branch.size(), 500u);
  EXPECT_EQ(in_branch.count("after-cp"), 0u);
  EXPECT_EQ(in_branch["d3/f8"], before.at("d3/f8"));
  ASSERT_EQ(Archil({"unmount", mnt_}).exit_code, 0);
}

TEST_F(TierTest, AKilledServersBucketRecoversAPrefixWithEverythingAcknowledgedWellBefore) {
  const std::string metrics = StartTieredWithMetrics();
  CreateDisk("kdisk");
  ASSERT_EQ(Mount("kdisk").exit_code, 0);
  auto content = [](int i) { return std::string(1000 + i * 37, static_cast<char>('a' + i % 26)); };
  // Phase A, then long enough for the recovery point (an 8 s seal age, then the upload and the
  // shipping), then phase B right up to the kill.
  int acked = 0;
  for (; acked < 40; ++acked) {
    ASSERT_TRUE(WriteFileSynced(mnt_ + "/f" + std::to_string(acked), content(acked)));
  }
  const int phase_a = acked;
  // The recovery point on an idle machine is about 13 s (an 8 s seal age, then the upload and
  // the shipping). On a loaded one the upload can lag: past 13 s the test waits for the event,
  // a shipping pass with nothing left to upload or ship, rather than for a longer guess.
  const auto phase_a_end = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(std::chrono::seconds(13));
  auto in_bucket = [&] {
    const std::string text = ScrapeMetrics(metrics);
    return MetricValue(text, "archil_tier_records_to_ship") == 0 &&
           MetricValue(text, "archil_tier_upload_backlog_segments") == 0;
  };
  while (!in_bucket() && std::chrono::steady_clock::now() - phase_a_end < std::chrono::seconds(120))
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ASSERT_TRUE(in_bucket()) << "phase A was not in the bucket 120 s after it was acknowledged";
  for (; acked < 80; ++acked) {
    ASSERT_TRUE(WriteFileSynced(mnt_ + "/f" + std::to_string(acked), content(acked)));
  }
  KillServer();
  Archil({"unmount", "-f", mnt_}, {}, 10000);

  WipeData();
  StartTiered();
  ASSERT_EQ(Mount("kdisk").exit_code, 0);
  // A prefix: files 0..k-1 whole, file k perhaps begun (created, its bytes not yet shipped),
  // nothing after it.
  int k = 0;
  while (k < acked && Slurp(mnt_ + "/f" + std::to_string(k)) == content(k)) ++k;
  for (int i = k + 1; i < acked; ++i) {
    EXPECT_FALSE(fs::exists(mnt_ + "/f" + std::to_string(i)))
        << "f" << i << " after a gap at f" << k;
  }
  EXPECT_GE(k, phase_a) << "a write acknowledged before the recovery point is missing";
  std::printf("recovered %d of %d acknowledged files (%d written in the last moments)\n", k, acked,
              acked - phase_a);
  // And the recovered disk takes writes.
  EXPECT_TRUE(WriteFileSynced(mnt_ + "/after", "x"));
  ASSERT_EQ(Archil({"unmount", mnt_}).exit_code, 0);
}

// The old owner paused (SIGSTOP) while a new server takes its bucket over, then resumed: it
// acknowledges nothing more (its lease lapsed while it was stopped, and its renewal finds the
// bucket taken), and nothing it writes is read by the new owner or by a later recovery. On the
// strict fake, which enforces conditional writes as S3 does (s3rver ignores them: tiering.md §5).
TEST_F(TierTest, AServerPausedWhileAnotherTakesItsBucketOverWritesNothingTheNewOneReads) {
  Result<std::unique_ptr<S3Fake>> fake = S3Fake::Start({});
  ASSERT_TRUE(fake.ok()) << fake.status().ToString();
  fake_ = std::move(*fake);  // a member: it outlives the servers TearDown stops
  store_ = "s3://archil/takeover?endpoint=" + fake_->endpoint() + "&region=us-east-1";
  env_["AWS_ACCESS_KEY_ID"] = "archil-test";
  env_["AWS_SECRET_ACCESS_KEY"] = "archil-test-secret";
  const std::string metrics_a = StartTieredWithMetrics();
  CreateDisk("owned");
  ASSERT_EQ(Mount("owned").exit_code, 0);
  ASSERT_TRUE(WriteFileSynced(mnt_ + "/a-before", "written while A owned the bucket"));
  // The new server needs the catalog (the disk, its token) in the bucket: wait until a copy of
  // A's holds every change made so far.
  auto sample = [](const std::string& address, const std::string& series) {
    return MetricValue(ScrapeMetrics(address), series);
  };
  for (int i = 0; i < 600 && sample(metrics_a, "archil_tier_catalog_behind") != 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_EQ(sample(metrics_a, "archil_tier_catalog_behind"), 0);

  // A pauses. Whatever happens below, it is killed at the end (SIGKILL ends a stopped process).
  const pid_t a = server_;
  server_ = 0;
  struct Reaper {
    pid_t pid;
    ~Reaper() {
      kill(pid, SIGKILL);
      int status = 0;
      WaitChild(pid, 10000, &status);
    }
  } reap_a{a};
  ASSERT_EQ(kill(a, SIGSTOP), 0);

  // B starts on the bucket from an empty data directory: it waits for A's lease to lapse,
  // takes the bucket over, recovers the disk and serves it with its old token.
  data_dir_ = dir_ / "data-b";
  StartTiered();
  const std::string mnt_b = mnt_ + "2";
  fs::create_directories(mnt_b);
  Ran mb = Archil({"mount", "-q", "owned", mnt_b});
  ASSERT_EQ(mb.exit_code, 0) << mb.err;
  ASSERT_TRUE(WriteFileSynced(mnt_b + "/b-file", "written by the new owner"));

  // A resumes. A write through its mount is refused (EROFS), never acknowledged. It runs in
  // a child process, so that a wait past the bound can be ended.
  ASSERT_EQ(kill(a, SIGCONT), 0);
  const std::string late = mnt_ + "/a-late";
  const pid_t writer = fork();
  ASSERT_GE(writer, 0);
  if (writer == 0) {  // exits with the errno of the first call that fails, 0 if none does
    const int fd = open(late.c_str(), O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) _exit(errno);
    if (write(fd, "the old owner's late write", 26) != 26 || fsync(fd) != 0) _exit(errno);
    _exit(close(fd) == 0 ? 0 : errno);
  }
  int status = 0;
  const auto resumed = std::chrono::steady_clock::now();
  const bool ended = WaitChild(writer, 60000, &status);
  std::printf("the old owner's write ended with %d after %.0f ms\n",
              WIFEXITED(status) ? WEXITSTATUS(status) : -1,
              std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - resumed)
                  .count());
  if (!ended) {
    kill(writer, SIGKILL);
    WaitChild(writer, 10000, &status);
  }
  EXPECT_TRUE(ended) << "the old owner neither acknowledged nor refused a write in 60 s";
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_NE(WEXITSTATUS(status), 0) << "the old owner acknowledged a write after the takeover";
  EXPECT_EQ(WEXITSTATUS(status), EROFS) << "a fenced server's disk is read-only to its mounts";
  double fenced = -1;
  for (int i = 0; i < 300 && (fenced = sample(metrics_a, "archil_tier_fenced")) != 1; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(fenced, 1) << "A does not say it was fenced";

  // The new owner never sees A's late write; a recovery from the bucket after B's clean stop
  // holds B's write and not A's.
  EXPECT_FALSE(fs::exists(mnt_b + "/a-late"));
  EXPECT_EQ(Slurp(mnt_b + "/b-file"), "written by the new owner");
  ASSERT_EQ(Archil({"unmount", mnt_b}).exit_code, 0);
  Archil({"unmount", "-f", mnt_}, {}, 10000);
  EXPECT_EQ(StopServer(), 0);  // B drains to the bucket
  kill(a, SIGKILL);
  data_dir_ = dir_ / "data-c";
  StartTiered();
  ASSERT_EQ(Mount("owned").exit_code, 0);
  EXPECT_EQ(Slurp(mnt_ + "/b-file"), "written by the new owner");
  EXPECT_FALSE(fs::exists(mnt_ + "/a-late")) << "a recovery read the fenced owner's write";
  ASSERT_EQ(Archil({"unmount", mnt_}).exit_code, 0);
}

TEST_F(TierTest, AnUnreachableBucketSlowsWritersWithoutFailingThemAndTheyResumeByThemselves) {
  StartTiered();  // a lease of 2 s: writes wait 1.7 s after the last renewal the store answered
  CreateDisk("odisk");
  ASSERT_EQ(Mount("odisk").exit_code, 0);
  auto content = [](int i) { return std::string(3000 + i * 11, static_cast<char>('A' + i % 26)); };
  // The writer is a process of its own, as an application is. Were it a thread of this test,
  // every command the test spawns meanwhile (`archil disks get`) would inherit the descriptor of
  // the file being written, and closing that copy (at exec, it is O_CLOEXEC) writes back the
  // file's dirty pages first: the command would wait in execve for the store as the writer does
  // (docs/semantics.md, "While the server is away").
  struct Shared {
    std::atomic<int> acked{0}, failed{0};
    std::atomic<int64_t> slowest_ms{0};
    std::atomic<bool> stop{false};
  };
  void* mem =
      mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(mem, MAP_FAILED);
  Shared& sh = *new (mem) Shared();
  std::atomic<int>& acked = sh.acked;
  std::atomic<int>& failed = sh.failed;
  std::atomic<int64_t>& slowest_ms = sh.slowest_ms;
  const std::string dir = mnt_;
  const pid_t writer = fork();
  ASSERT_GE(writer, 0);
  if (writer == 0) {
    for (int i = 0; !sh.stop && i < 100000; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      if (!WriteFileSynced(dir + "/f" + std::to_string(i), content(i))) {
        ++sh.failed;
        _exit(1);
      }
      const int64_t ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::steady_clock::now() - t0)
                             .count();
      if (ms > sh.slowest_ms) sh.slowest_ms = ms;
      ++sh.acked;
    }
    _exit(0);
  }
  // A failed ASSERT returns early: the writer stops and is reaped on every path (its write may
  // wait for the store until s3rver's guard continues it, then SIGKILL).
  struct Reaper {
    Shared& sh;
    pid_t pid;
    void* mem;
    ~Reaper() {
      sh.stop = true;
      if (pid > 0 && !WaitChild(pid, 300000, nullptr)) ADD_FAILURE() << "the writer did not stop";
      munmap(mem, sizeof(Shared));
    }
  } reaper{sh, writer, mem};
  auto wait_for = [&](const std::function<bool()>& done, int seconds) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    while (!done() && std::chrono::steady_clock::now() < end) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return done();
  };
  auto tier_writes = [&] {
    Ran r = Archil({"--json", "disks", "get", "odisk"});
    json d = json::parse(r.out, nullptr, false);
    return d.is_object() && d.contains("tier") ? d["tier"].value("writes", "") : "(none)";
  };
  ASSERT_TRUE(wait_for([&] { return acked >= 20; }, 60)) << acked << " writes in 60 s";
  EXPECT_EQ(tier_writes(), "accepted");

  // The outage lasts ARCHIL_OUTAGE_SECONDS more once writes are seen waiting (10 in CI; 600 by
  // hand: docs/measurements.md).
  const char* outage = std::getenv("ARCHIL_OUTAGE_SECONDS");
  const int outage_s = outage ? std::max(1, std::atoi(outage)) : 10;
  // The store stops answering: within a lease, writes wait (the server answers DELAY), as the
  // API says.
  s3_->Pause(outage_s + 150);
  std::string waiting;
  ASSERT_TRUE(wait_for(
      [&] {
        waiting = tier_writes();
        return waiting.rfind("waiting: ", 0) == 0;
      },
      30))
      << "writes were never held with the store stopped: " << waiting;
  const int held_at = acked;
  std::this_thread::sleep_for(std::chrono::seconds(outage_s));
  EXPECT_EQ(failed.load(), 0);
  // One write may have been admitted before the gate closed.
  EXPECT_LE(acked.load(), held_at + 1) << "writes went on with the lease lapsed";

  // The store answers again: a renewal restores the lease and the writer goes on by itself.
  const auto resumed = std::chrono::steady_clock::now();
  s3_->Resume();
  ASSERT_TRUE(wait_for([&] { return acked >= held_at + 20; }, 120))
      << "writes did not resume: " << acked << " acknowledged, held at " << held_at;
  const auto resume_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::steady_clock::now() - resumed)
                             .count();
  sh.stop = true;
  int wstatus = 0;
  ASSERT_TRUE(WaitChild(writer, 60000, &wstatus));
  reaper.pid = -1;
  EXPECT_EQ(wstatus, 0);
  EXPECT_EQ(failed.load(), 0) << "a writer failed while the store was away";
  EXPECT_GE(slowest_ms.load(), 1000) << "no write waited";
  EXPECT_EQ(tier_writes(), "accepted");
  const int total = acked;
  std::printf(
      "%d fsynced writes, the slowest %lld ms (an outage of %d s and more); held at %d; 20 more "
      "writes %lld ms after the store came back\n",
      total, static_cast<long long>(slowest_ms.load()), outage_s, held_at,
      static_cast<long long>(resume_ms));

  // Everything acknowledged reaches the bucket: a fresh server recovers every file.
  ASSERT_EQ(Archil({"unmount", mnt_}).exit_code, 0);
  EXPECT_EQ(StopServer(), 0);
  WipeData();
  StartTiered();
  ASSERT_EQ(Mount("odisk").exit_code, 0);
  int missing = 0;
  for (int i = 0; i < total; ++i) {
    if (Slurp(mnt_ + "/f" + std::to_string(i)) != content(i)) ++missing;
  }
  EXPECT_EQ(missing, 0) << "of " << total << " acknowledged files";
  ASSERT_EQ(Archil({"unmount", mnt_}).exit_code, 0);
}

}  // namespace
}  // namespace archil::testing
