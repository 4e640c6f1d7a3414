#include "mount/journal.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

namespace archil::mount {

Journal::Journal(std::string identifier, std::string socket_path)
    : identifier_(std::move(identifier)), socket_path_(std::move(socket_path)) {
  fd_ = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
}

Journal::~Journal() {
  if (fd_ >= 0) close(fd_);
}

namespace {
void Field(std::string* out, std::string_view key, std::string_view value) {
  out->append(key);
  if (value.find('\n') == std::string_view::npos) {
    out->push_back('=');
    out->append(value);
  } else {
    out->push_back('\n');
    uint64_t n = value.size();
    for (int i = 0; i < 8; ++i) out->push_back(static_cast<char>((n >> (8 * i)) & 0xff));
    out->append(value);
  }
  out->push_back('\n');
}
}  // namespace

std::string Journal::Datagram(std::string_view identifier, Priority priority,
                              std::string_view message) {
  std::string d;
  Field(&d, "PRIORITY", std::to_string(static_cast<int>(priority)));
  Field(&d, "SYSLOG_IDENTIFIER", identifier);
  Field(&d, "MESSAGE", message);
  return d;
}

void Journal::Log(Priority priority, std::string_view message) {
  if (fd_ >= 0) {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, socket_path_.c_str(), sizeof(addr.sun_path) - 1);
    std::string d = Datagram(identifier_, priority, message);
    // Never blocks: a journal that does not keep up gets the line on stderr instead.
    if (sendto(fd_, d.data(), d.size(), MSG_NOSIGNAL | MSG_DONTWAIT,
               reinterpret_cast<sockaddr*>(&addr),
               sizeof(addr)) == static_cast<ssize_t>(d.size())) {
      return;
    }
  }
  std::string line = identifier_ + ": " + std::string(message) + "\n";
  (void)!write(STDERR_FILENO, line.data(), line.size());
}

}  // namespace archil::mount
