#include "base/service_notify.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>

namespace archil {
namespace {

// A datagram socket standing in for systemd's: bound to `name` ("/path" or "@abstract").
class FakeManager {
 public:
  explicit FakeManager(const std::string& name) {
    fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::memcpy(a.sun_path, name.data(), name.size());
    if (name[0] == '@') a.sun_path[0] = '\0';
    bound_ = ::bind(fd_, reinterpret_cast<sockaddr*>(&a),
                    static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + name.size())) == 0;
    timeval tv{2, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  }
  ~FakeManager() { ::close(fd_); }
  bool bound() const { return bound_; }
  std::string Receive() {
    char buf[4096];
    const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
    return n < 0 ? std::string() : std::string(buf, static_cast<size_t>(n));
  }

 private:
  int fd_ = -1;
  bool bound_ = false;
};

class ServiceNotifyTest : public ::testing::Test {
 protected:
  void TearDown() override {
    unsetenv("NOTIFY_SOCKET");
    unsetenv("WATCHDOG_USEC");
    unsetenv("WATCHDOG_PID");
  }
};

TEST_F(ServiceNotifyTest, WithoutAManagerNothingIsSentAndNothingFails) {
  unsetenv("NOTIFY_SOCKET");
  EXPECT_TRUE(NotifyServiceManager("READY=1").ok());
}

TEST_F(ServiceNotifyTest, ReachesAPathAndAnAbstractSocket) {
  const std::string path = ::testing::TempDir() + "/notify-" + std::to_string(getpid());
  unlink(path.c_str());
  FakeManager byPath(path);
  ASSERT_TRUE(byPath.bound());
  setenv("NOTIFY_SOCKET", path.c_str(), 1);
  ASSERT_TRUE(NotifyServiceManager("READY=1\nSTATUS=serving").ok());
  EXPECT_EQ(byPath.Receive(), "READY=1\nSTATUS=serving");
  unlink(path.c_str());

  const std::string abstract = "@archil-notify-test-" + std::to_string(getpid());
  FakeManager byName(abstract);
  ASSERT_TRUE(byName.bound());
  setenv("NOTIFY_SOCKET", abstract.c_str(), 1);
  ASSERT_TRUE(NotifyServiceManager("WATCHDOG=1").ok());
  EXPECT_EQ(byName.Receive(), "WATCHDOG=1");
}

TEST_F(ServiceNotifyTest, ABadOrGoneSocketIsAnErrorNotACrash) {
  setenv("NOTIFY_SOCKET", "relative/path", 1);
  EXPECT_EQ(NotifyServiceManager("READY=1").code(), Status::Code::kInvalidArgument);
  setenv("NOTIFY_SOCKET", ("/" + std::string(200, 'x')).c_str(), 1);
  EXPECT_FALSE(NotifyServiceManager("READY=1").ok());
  setenv("NOTIFY_SOCKET", "/nonexistent/archil-notify", 1);
  EXPECT_FALSE(NotifyServiceManager("READY=1").ok());
}

TEST_F(ServiceNotifyTest, TheWatchdogIntervalIsForThisProcessOnly) {
  EXPECT_FALSE(ServiceWatchdogInterval());
  setenv("WATCHDOG_USEC", "30000000", 1);
  EXPECT_EQ(ServiceWatchdogInterval(), std::chrono::seconds(30));
  setenv("WATCHDOG_PID", std::to_string(getpid()).c_str(), 1);
  EXPECT_EQ(ServiceWatchdogInterval(), std::chrono::seconds(30));
  setenv("WATCHDOG_PID", std::to_string(getpid() + 1).c_str(), 1);
  EXPECT_FALSE(ServiceWatchdogInterval());
  unsetenv("WATCHDOG_PID");
  for (const char* bad : {"", "0", "-5", "12abc", "99999999999999999999"}) {
    setenv("WATCHDOG_USEC", bad, 1);
    EXPECT_FALSE(ServiceWatchdogInterval()) << bad;
  }
}

}  // namespace
}  // namespace archil
