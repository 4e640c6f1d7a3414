#include "mount/journal.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <string>

namespace archil::mount {
namespace {

TEST(Journal, DatagramIsJournaldsNativeFormat) {
  EXPECT_EQ(Journal::Datagram("archil-dsk-1", Journal::kInfo, "Mounted disk in 7 ms"),
            "PRIORITY=6\nSYSLOG_IDENTIFIER=archil-dsk-1\nMESSAGE=Mounted disk in 7 ms\n");
  // A value with a newline goes in the binary form: name, newline, 64-bit LE length, value.
  std::string d = Journal::Datagram("x", Journal::kError, "a\nb");
  std::string tail = std::string("MESSAGE\n") + std::string("\x03\0\0\0\0\0\0\0", 8) + "a\nb\n";
  ASSERT_GE(d.size(), tail.size());
  EXPECT_EQ(d.substr(d.size() - tail.size()), tail);
}

TEST(Journal, SendsOneDatagramPerLineToTheSocket) {
  std::string path = "/tmp/archil-journal-test-" + std::to_string(getpid());
  unlink(path.c_str());
  int fd = socket(AF_UNIX, SOCK_DGRAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path.c_str());
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  {
    Journal j("archil-dsk-9", path);
    j.Info("first");
    j.Error("second");
  }
  char buf[512];
  ssize_t n = recv(fd, buf, sizeof(buf), 0);
  ASSERT_GT(n, 0);
  EXPECT_EQ(std::string(buf, static_cast<size_t>(n)),
            Journal::Datagram("archil-dsk-9", Journal::kInfo, "first"));
  n = recv(fd, buf, sizeof(buf), 0);
  ASSERT_GT(n, 0);
  EXPECT_EQ(std::string(buf, static_cast<size_t>(n)),
            Journal::Datagram("archil-dsk-9", Journal::kError, "second"));
  close(fd);
  unlink(path.c_str());
}

}  // namespace
}  // namespace archil::mount
