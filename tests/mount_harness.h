// The MountTest fixture shared by the real-FUSE suites (mount_e2e_test.cc, mount_diff_test.cc): a
// real `archil server` (CliTest), disks created with a token, and `archil mount` of them as root
// at dir_/mnt; a journal socket collects the daemon's journal lines. Plus RunAs, to run a call as
// another local user, and Api, one request to the control plane with the admin key.
//
// Skipped (not failed) without root or /dev/fuse, unless ARCHIL_REQUIRE_FUSE=1 (CI sets it).
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <grp.h>
#include <netinet/in.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "api/mount_record.h"
#include "api/mount_table.h"
#include "cli_harness.h"
#include "http/http_client.h"
#include "metrics_scrape.h"
#include "scoped_tmpfs.h"

namespace archil::testing {

inline bool FuseRequired() {
  const char* v = std::getenv("ARCHIL_REQUIRE_FUSE");
  return v && std::string(v) == "1";
}

// Runs `fn` in a child process as uid/gid (no supplementary groups); returns what it returned
// (an errno, 0 for success), or -1 if the child died or ran over `timeout_ms` (it is killed).
template <typename Fn>
int RunAs(uid_t uid, gid_t gid, Fn fn, int timeout_ms = 60000) {
  pid_t pid = fork();
  if (pid == 0) {
    if (setgroups(0, nullptr) != 0 || setgid(gid) != 0 || setuid(uid) != 0) _exit(200);
    _exit(fn());
  }
  int status = 0;
  if (!WaitChild(pid, timeout_ms, &status)) {
    ADD_FAILURE() << "a call as uid " << uid << " ran over " << timeout_ms << " ms";
    return -1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

inline int ErrnoOr0(int rc) { return rc < 0 ? errno : 0; }

// A loopback port free right now, so that a restarted server listens where its mounts expect it.
inline int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(a);
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    close(fd);
    return 0;
  }
  close(fd);
  return ntohs(a.sin_port);
}

class MountTest : public CliTest {
 protected:
  void SetUp() override {
    if (geteuid() != 0 || access("/dev/fuse", R_OK | W_OK) != 0) {
      if (FuseRequired()) FAIL() << "ARCHIL_REQUIRE_FUSE=1 but there is no root or no /dev/fuse";
      GTEST_SKIP() << "needs root and /dev/fuse";
    }
    CliTest::SetUp();
    mnt_ = (dir_ / "mnt").string();
    fs::create_directories(mnt_);
    chmod(dir_.c_str(), 0755);  // other users walk to the mount point
    journal_ = (dir_ / "journal.sock").string();
    journal_fd_ = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", journal_.c_str());
    ASSERT_EQ(bind(journal_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    env_["ARCHIL_JOURNAL_SOCKET"] = journal_;
  }

  // -f: a test's end needs no flush, and a plain unmount could wait on a daemon whose server
  // the test stopped.
  void TearDown() override {
    if (!mnt_.empty()) {
      for (const std::string& m : {mnt_, mnt_ + "2"}) {
        if (FindMount(m)) Archil({"unmount", "-f", m}, {}, 10000);
      }
    }
    if (journal_fd_ >= 0) close(journal_fd_);
    CliTest::TearDown();
  }

  // A disk and its token; the token goes to the environment of every later command.
  std::string CreateDisk(const std::string& name, const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args = {"--json", "disks", "create", name};
    for (const auto& a : extra) args.push_back(a);
    Ran r = Archil(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    json d = json::parse(r.out, nullptr, false);
    EXPECT_TRUE(d.is_object()) << r.out;
    if (!d.is_object()) return "";
    env_["ARCHIL_MOUNT_TOKEN"] = d["authorizedUsers"][0].value("token", "");
    return d.value("diskId", "");
  }

  // How many requests of type `op` (PING, UNLINK, ...) the mount at mnt_ sent and had answered,
  // from `archil metrics` (0 before its first).
  double Requests(const std::string& op) {
    return std::max(0.0, MetricValue(Archil({"metrics", mnt_}).out,
                                     R"(archil_client_requests_total{op=")" + op + R"("})"));
  }

  // syncfs, then fsync of the mount's root: every write through it has reached the server and is
  // durable (syncfs alone is not a sync point on a FUSE mount: semantics.md §3.4).
  void SyncMount() {
    int fd = open(mnt_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    EXPECT_EQ(syncfs(fd), 0);  // the kernel's dirty pages to the daemon
    EXPECT_EQ(fsync(fd), 0);   // and what the daemon answered itself to the disk (a sync point)
    close(fd);
  }

  // One API request with the admin key, as curl would send it.
  HttpResponse Api(const std::string& method, const std::string& target, const std::string& body,
                   const std::vector<std::pair<std::string, std::string>>& headers = {}) {
    json advert = json::parse(ReadFile(dir_ / "run" / "test-1.json"), nullptr, false);
    Result<Url> url = ParseUrl(advert.value("api", ""));
    EXPECT_TRUE(url.ok());
    HttpRequest req;
    req.method = method;
    req.target = target;
    req.headers = headers;
    std::string key = ReadFile(dir_ / "data" / "admin-api-key");
    while (!key.empty() && std::isspace(static_cast<unsigned char>(key.back()))) key.pop_back();
    req.headers.emplace_back("Authorization", "Bearer " + key);
    if (!body.empty()) req.headers.emplace_back("Content-Type", "application/json");
    req.body = body;
    Result<HttpResponse> r = SendHttpRequest(*url, req, {});
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : HttpResponse{};
  }

  Ran Mount(const std::string& disk, const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args = {"mount", "-q", disk, mnt_};
    for (const auto& a : extra) args.push_back(a);
    return Archil(args);
  }

  // The kernel's read-ahead of the mount at mnt_ (its bdi's read_ahead_kb), or "" if not found.
  std::string ReadAheadKb() {
    std::optional<MountEntry> e = FindMount(mnt_);
    if (!e) return "";
    std::string v = Slurp("/sys/class/bdi/0:" + std::to_string(e->minor) + "/read_ahead_kb");
    while (!v.empty() && v.back() == '\n') v.pop_back();
    return v;
  }

  pid_t DaemonPid(const std::string& mnt) {
    Ran s = Archil({"--json", "status", mnt});
    json j = json::parse(s.out, nullptr, false);
    return j.is_object() ? j.value("pid", 0) : 0;
  }

  std::vector<std::string> JournalLines() {
    std::vector<std::string> lines;
    char buf[4096];
    for (;;) {
      ssize_t n = recv(journal_fd_, buf, sizeof(buf), MSG_DONTWAIT);
      if (n <= 0) break;
      lines.emplace_back(buf, static_cast<size_t>(n));
    }
    return lines;
  }

  bool FindMountedHere() const { return FindMount(mnt_).has_value(); }

  static std::string Slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

  std::string mnt_;
  std::string journal_;
  int journal_fd_ = -1;
};

}  // namespace archil::testing
