// S3rverProcess: s3rver (npm, an independent S3 implementation; `npm ci` installs it in
// node_modules) on 127.0.0.1, a bucket configured, for interoperability tests. Its credentials
// are s3rver's fixed S3RVER/S3RVER. It ignores If-None-Match and If-Match, and needs Node's
// legacy OpenSSL provider for truncated lists (below).
//
// Start() returns kNotFound when node or s3rver is not installed; tests skip then unless
// ARCHIL_REQUIRE_S3RVER=1 (CI sets it).
#pragma once

#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>

#include "base/status.h"

namespace archil::testing {

inline bool S3rverRequired() {
  const char* v = std::getenv("ARCHIL_REQUIRE_S3RVER");
  return v && std::string(v) == "1";
}

class S3rverProcess {
 public:
  // `dir` holds s3rver's files and its log; `bucket` is created.
  static Result<std::unique_ptr<S3rverProcess>> Start(const std::string& dir,
                                                      const std::string& bucket) {
    const std::string bin = std::string(ARCHIL_SOURCE_DIR) + "/node_modules/.bin/s3rver";
    if (access(bin.c_str(), X_OK) != 0 || std::system("command -v node >/dev/null") != 0) {
      return Status::NotFound(bin + " or node is not installed (scripts/setup.sh runs npm ci)");
    }
    std::filesystem::create_directories(dir + "/data");
    const std::string log = dir + "/s3rver.log";
    pid_t pid = fork();
    if (pid == 0) {
      FILE* out = std::freopen(log.c_str(), "w", stdout);
      (void)out;
      dup2(STDOUT_FILENO, STDERR_FILENO);
      // s3rver 3.7 makes ListObjectsV2 continuation tokens with a cipher that OpenSSL 3 (Node 18
      // on Debian 12) keeps in its legacy provider; without it every truncated list is a 500.
      setenv("NODE_OPTIONS", "--openssl-legacy-provider", 1);
      execl(bin.c_str(), "s3rver", "-d", (dir + "/data").c_str(), "-a", "127.0.0.1", "-p", "0",
            "--silent", "--configure-bucket", bucket.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    std::unique_ptr<S3rverProcess> p(new S3rverProcess(pid));
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < deadline) {
      std::ifstream in(log);
      std::stringstream text;
      text << in.rdbuf();
      const std::string s = text.str();
      const size_t at = s.find("listening on");
      const size_t colon = at == std::string::npos ? at : s.find(':', at + 14);
      if (colon != std::string::npos && s.find('\n', colon) != std::string::npos) {
        p->port_ = std::atoi(s.c_str() + colon + 1);
        if (p->port_ > 0) return p;
      }
      int status = 0;
      if (waitpid(pid, &status, WNOHANG) == pid) {
        p->pid_ = -1;
        return Status::Unavailable("s3rver exited at start: " + s);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return Status::Unavailable("s3rver did not say where it listens within 30 s (see " + log + ")");
  }

  // SIGTERM (and SIGCONT, should a test have paused it), then SIGKILL if it has not ended 10 s
  // later.
  ~S3rverProcess() {
    if (pid_ <= 0) return;
    kill(pid_, SIGTERM);
    kill(pid_, SIGCONT);
    for (int i = 0; i < 1000; ++i) {
      if (waitpid(pid_, nullptr, WNOHANG) == pid_) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }

  // The store becomes unreachable as a stopped machine is: connections open, nothing answers.
  // Resume() ends it. So that a test stopped or killed meanwhile (ctest's timeout suspends a test
  // before it kills it) cannot leave the store stopped, and with it every request of a mount
  // waiting on it, a guard outside the test's process tree resumes it `at_most_s` seconds later
  // whatever happens to the test (it signals through a pidfd: never another process).
  void Pause(int at_most_s) {
    const int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid_, 0));
    if (pidfd >= 0) {
      const pid_t guard = fork();
      if (guard == 0) {
        setsid();
        if (fork() == 0) {  // reparented to init: no test runner walks into it
          // Nothing of the test's held open (ctest waits for its output pipe to close).
          for (int fd = 0; fd < 1024; ++fd) {
            if (fd != pidfd) close(fd);
          }
          sleep(static_cast<unsigned>(at_most_s));
          syscall(SYS_pidfd_send_signal, pidfd, SIGCONT, nullptr, 0);
        }
        _exit(0);
      }
      if (guard > 0) waitpid(guard, nullptr, 0);
      close(pidfd);
    }
    kill(pid_, SIGSTOP);
  }
  void Resume() { kill(pid_, SIGCONT); }

  int port() const { return port_; }
  std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  explicit S3rverProcess(pid_t pid) : pid_(pid) {}
  pid_t pid_;
  int port_ = 0;
};

}  // namespace archil::testing
