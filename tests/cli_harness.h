// The `archil` and `archil-server` binaries as a user runs them, for end-to-end tests: commands
// run to completion with their output captured, and a real server process started through
// `archil server` (optionally under a wrapper such as `ip netns exec NS`), found through its
// advertisement.
//
// Nothing a test starts outlives it: every command, server and mount daemon gets
// ARCHIL_OWNER_PID (the test process; base/owner_watch.h), every wait is bounded and ends in
// SIGKILL, and each test's files and mounts live under its own directory of the test root
// (ARCHIL_TEST_ROOT, default /tmp/archil-tests), which scripts/test.sh sweeps.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace archil::testing {

namespace fs = std::filesystem;
using nlohmann::json;

inline const std::string kBin = ARCHIL_BIN_DIR;

struct Ran {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// The caller's environment without its ARCHIL_* variables, plus `extra`.
inline std::vector<std::string> Environment(const std::map<std::string, std::string>& extra) {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    std::string kv = *e;
    std::string key = kv.substr(0, kv.find('='));
    if (key.rfind("ARCHIL_", 0) == 0 || extra.count(key)) continue;
    env.push_back(kv);
  }
  for (const auto& [k, v] : extra) env.push_back(k + "=" + v);
  return env;
}

inline std::vector<char*> Pointers(std::vector<std::string>& v) {
  std::vector<char*> p;
  for (auto& s : v) p.push_back(s.data());
  p.push_back(nullptr);
  return p;
}

// Where tests keep their directories (and so their mounts).
inline fs::path TestRoot() {
  const char* root = std::getenv("ARCHIL_TEST_ROOT");
  return root && *root ? fs::path(root) : fs::path("/tmp/archil-tests");
}

// Waits up to `ms` for child `pid`; SIGKILLs it after that. Returns its wait status, and
// whether it ended by itself in time.
inline bool WaitChild(pid_t pid, int ms, int* status) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (true) {
    const pid_t r = waitpid(pid, status, WNOHANG);
    if (r == pid || (r < 0 && errno != EINTR)) return r == pid;
    if (std::chrono::steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  kill(pid, SIGKILL);
  waitpid(pid, status, 0);  // SIGKILL ends even a process blocked on a FUSE request (the
                            // daemon answers killed callers), or one that never started one
  return false;
}

constexpr int kCommandTimeoutMs = 120000;

// Runs a command to completion, capturing stdout and stderr. A command still running after
// `timeout_ms` is killed, and the test fails.
inline Ran RunCommand(std::vector<std::string> argv, const std::map<std::string, std::string>& env,
                      int timeout_ms = kCommandTimeoutMs) {
  int out[2], err[2];
  EXPECT_EQ(pipe2(out, O_CLOEXEC), 0);
  EXPECT_EQ(pipe2(err, O_CLOEXEC), 0);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  posix_spawn_file_actions_adddup2(&fa, err[1], 2);
  std::vector<std::string> envv = Environment(env);
  auto args = Pointers(argv);
  auto envp = Pointers(envv);
  pid_t pid = 0;
  int rc = posix_spawn(&pid, argv[0].c_str(), &fa, nullptr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  close(out[1]);
  close(err[1]);
  Ran r;
  if (rc != 0) return r;
  pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
  int open_fds = 2;
  char buf[4096];
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  auto left_ms = [&] {
    return static_cast<int>(std::max<int64_t>(
        0, std::chrono::duration_cast<std::chrono::milliseconds>(deadline -
                                                                 std::chrono::steady_clock::now())
               .count()));
  };
  while (open_fds > 0 && poll(fds, 2, left_ms()) > 0) {
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP))) continue;
      ssize_t n = read(fds[i].fd, buf, sizeof(buf));
      if (n <= 0) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      } else {
        (i == 0 ? r.out : r.err).append(buf, static_cast<size_t>(n));
      }
    }
  }
  for (pollfd& p : fds) {
    if (p.fd >= 0) close(p.fd);
  }
  int status = 0;
  if (!WaitChild(pid, left_ms(), &status)) {
    ADD_FAILURE() << argv[0] << " " << (argv.size() > 1 ? argv[1] : "") << " ran over "
                  << timeout_ms << " ms and was killed";
  }
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = TestRoot() / (std::to_string(getpid()) + "-" +
                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "run");
    data_dir_ = dir_ / "data";
    // Every ARCHIL_* variable of the caller is dropped (Environment()); servers advertise here,
    // and what the test starts ends with it.
    env_ = {{"ARCHIL_RUN_DIR", (dir_ / "run").string()},
            {"ARCHIL_OWNER_PID", std::to_string(getpid())}};
  }
  void TearDown() override {
    StopServer();
    std::error_code ec;  // a mount left under dir_ (a failed unmount) must not throw here
    fs::remove_all(dir_, ec);
  }

  Ran Archil(std::vector<std::string> args, const std::map<std::string, std::string>& extra = {},
             int timeout_ms = kCommandTimeoutMs) {
    args.insert(args.begin(), kBin + "/archil");
    auto env = env_;
    for (auto& [k, v] : extra) env[k] = v;
    return RunCommand(args, env, timeout_ms);
  }

  // Starts `archil server` in the background (run by `wrapper`, if given: its argv up to the
  // command) and waits for its advertisement.
  void StartServer(const std::vector<std::string>& extra = {},
                   const std::vector<std::string>& wrapper = {}) {
    std::vector<std::string> argv = wrapper;
    for (const std::string& a : {kBin + "/archil", std::string("server"), std::string("--data-dir"),
                                 data_dir_.string(), std::string("--api-listen"), api_listen_,
                                 std::string("--region"), std::string("test-1")}) {
      argv.push_back(a);
    }
    for (auto& a : extra) argv.push_back(a);
    // Tests run in parallel: each server takes a free mount port unless the test names one.
    if (std::find(extra.begin(), extra.end(), "--mount-listen") == extra.end()) {
      argv.emplace_back("--mount-listen");
      argv.emplace_back("127.0.0.1:0");
    }
    std::vector<std::string> envv = Environment(env_);
    auto args = Pointers(argv);
    auto envp = Pointers(envv);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    std::string log = (dir_ / "server.log").string();
    // Both outputs to the log: a server left running by a test that crashed must not hold the
    // test's stdout open, or ctest waits for it until its timeout.
    posix_spawn_file_actions_addopen(&fa, 2, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2(&fa, 2, 1);
    // A server killed with kill -9 leaves its advertisement: wait for the new one, not that.
    fs::remove(dir_ / "run" / "test-1.json");
    ASSERT_EQ(posix_spawn(&server_, argv[0].c_str(), &fa, nullptr, args.data(), envp.data()), 0);
    posix_spawn_file_actions_destroy(&fa);
    fs::path advert = dir_ / "run" / "test-1.json";
    // A start that recovers from a bucket takes seconds (more under a sanitizer): up to 60 s, as
    // long as the server runs.
    for (int i = 0; i < 2400 && !fs::exists(advert); ++i) {
      int status = 0;
      if (waitpid(server_, &status, WNOHANG) == server_) {
        server_ = 0;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
    ASSERT_TRUE(fs::exists(advert)) << "server did not start; log:\n" << ReadFile(log);
  }

  // SIGKILL: the process dies mid-work, as in a crash.
  void KillServer() {
    if (server_ <= 0) return;
    kill(server_, SIGKILL);
    int status = 0;
    WaitChild(server_, 10000, &status);
    server_ = 0;
  }

  // SIGTERM; returns the server's exit code. A server still running after 30 s is killed, and
  // the test fails.
  int StopServer() {
    if (server_ <= 0) return -1;
    kill(server_, SIGTERM);
    int status = 0;
    if (!WaitChild(server_, 30000, &status)) ADD_FAILURE() << "the server ignored SIGTERM for 30 s";
    server_ = 0;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

  static std::string ReadFile(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

  fs::path dir_;
  fs::path data_dir_;  // the next StartServer's --data-dir (dir_/data unless a test moves it)
  std::map<std::string, std::string> env_;
  std::string api_listen_ = "127.0.0.1:0";
  pid_t server_ = 0;
};

}  // namespace archil::testing
