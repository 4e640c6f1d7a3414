// abuse_attack: the three attacks on a disk server that a holder of one disk token (or anyone who
// can reach the port) could mount, run against a real `archil server` for a given time, so that
// bench/abuse.sh can measure what another disk's clients see meanwhile. It attacks; it measures
// nothing but what it did.
//
//   abuse_attack stall  ADDRESS TOKEN SECONDS [CONNECTIONS]
//       CONNECTIONS (256) authenticated connections each send a WRITE header declaring 4 MiB and
//       then all of it but one byte, and hold it; a connection the server closes (a frame past
//       its deadline) is opened again at once, so the pressure stays.
//   abuse_attack idle   ADDRESS SECONDS [CONNECTIONS] [SOURCES]
//       CONNECTIONS (4200) TCP connections from SOURCES (70) loopback addresses (127.0.0.2...),
//       each under the per-address limit, that never say a word; one the server closes is opened
//       again. ADDRESS may be the disk server's or the HTTP API's.
//   abuse_attack xattr  ADDRESS TOKEN SECONDS [THREADS]
//       One file takes xattrs with 250-byte names until the server refuses more (its per-inode
//       totals); THREADS (2) then list and read them in a loop.
//
// The last line says what was done: connections opened and closed by the server, calls made.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "client/disk_client.h"
#include "client/raw_wire.h"
#include "client/remote_fs.h"
#include "net/socket.h"
#include "proto/frame.h"
#include "proto/messages.h"

namespace archil {
namespace {

using Clock = std::chrono::steady_clock;

bool Closed(int fd) {
  pollfd p{fd, POLLIN | POLLRDHUP, 0};
  if (::poll(&p, 1, 0) != 1) return false;
  char b;
  return (p.revents & (POLLHUP | POLLRDHUP | POLLERR)) != 0 ||
         ::recv(fd, &b, 1, MSG_DONTWAIT | MSG_PEEK) == 0;
}

void RaiseFdLimit() {
  rlimit r{};
  getrlimit(RLIMIT_NOFILE, &r);
  r.rlim_cur = r.rlim_max;
  setrlimit(RLIMIT_NOFILE, &r);
}

// A connection holding a 4 MiB WRITE but its last byte.
struct Holder {
  net::Fd fd;
  size_t sent = 0;
};

int Stall(const std::string& address, const std::string& token, int seconds, int n) {
  proto::FrameHeader w;
  w.type = proto::kTypeWrite;
  const std::string frame = proto::EncodeFrame(w, "x", std::string(4 << 20, 'a'));
  std::vector<Holder> held(static_cast<size_t>(n));
  uint64_t opened = 0, closed = 0, refused = 0;
  const auto end = Clock::now() + std::chrono::seconds(seconds);
  while (Clock::now() < end) {
    for (Holder& h : held) {
      if (h.fd.valid() && Closed(h.fd.get())) {
        h.fd = net::Fd();
        ++closed;
      }
      if (!h.fd.valid()) {
        h.fd = client::AuthenticatedSocket(address, token);
        h.sent = 0;
        if (!h.fd.valid()) {
          ++refused;
          continue;
        }
        ++opened;
      }
      // Push what the socket takes without blocking, up to the last byte.
      while (h.sent < frame.size() - 1) {
        const ssize_t k = ::send(h.fd.get(), frame.data() + h.sent, frame.size() - 1 - h.sent,
                                 MSG_NOSIGNAL | MSG_DONTWAIT);
        if (k <= 0) break;
        h.sent += static_cast<size_t>(k);
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  std::printf(
      "stall: %d connections held for %d s: %llu opened, %llu closed by the server, %llu "
      "refused\n",
      n, seconds, static_cast<unsigned long long>(opened), static_cast<unsigned long long>(closed),
      static_cast<unsigned long long>(refused));
  return 0;
}

// A TCP connection to `address` from 127.0.0.`source`.
net::Fd ConnectFrom(const std::string& address, int source) {
  const size_t colon = address.rfind(':');
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(static_cast<uint16_t>(std::atoi(address.c_str() + colon + 1)));
  if (inet_pton(AF_INET, address.substr(0, colon).c_str(), &to.sin_addr) != 1) return net::Fd();
  net::Fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return fd;
  sockaddr_in from{};
  from.sin_family = AF_INET;
  from.sin_addr.s_addr = htonl(0x7f000000u | static_cast<uint32_t>(source));
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&from), sizeof from) != 0) return net::Fd();
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&to), sizeof to) != 0) return net::Fd();
  return fd;
}

int Idle(const std::string& address, int seconds, int n, int sources) {
  RaiseFdLimit();
  std::vector<net::Fd> held(static_cast<size_t>(n));
  uint64_t opened = 0, closed = 0, failed = 0;
  const auto end = Clock::now() + std::chrono::seconds(seconds);
  while (Clock::now() < end) {
    for (size_t i = 0; i < held.size() && Clock::now() < end; ++i) {
      if (held[i].valid() && Closed(held[i].get())) {
        held[i] = net::Fd();
        ++closed;
      }
      if (held[i].valid()) continue;
      held[i] = ConnectFrom(address, 2 + static_cast<int>(i) % sources);
      if (held[i].valid()) {
        ++opened;
      } else {
        ++failed;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  std::printf(
      "idle: %d connections from %d addresses held for %d s: %llu opened, %llu closed by "
      "the server, %llu failed\n",
      n, sources, seconds, static_cast<unsigned long long>(opened),
      static_cast<unsigned long long>(closed), static_cast<unsigned long long>(failed));
  return 0;
}

int Xattr(const std::string& address, const std::string& token, int seconds, int threads) {
  client::DiskClientOptions o;
  o.address = address;
  o.token = token;
  o.retry_for_ms = 5000;
  Result<std::unique_ptr<client::DiskClient>> c = client::DiskClient::Connect(o);
  if (!c.ok()) {
    std::fprintf(stderr, "abuse_attack: connect: %s\n", c.status().ToString().c_str());
    return 1;
  }
  client::RemoteFs fs(c->get());
  const std::string name = "xattrs-" + std::to_string(getpid());
  Result<posix::Attr> f = fs.Mknod(posix::kRootIno, name, S_IFREG | 0644, 0, {});
  if (!f.ok()) {
    std::fprintf(stderr, "abuse_attack: create: %s\n", f.status().ToString().c_str());
    return 1;
  }
  int set = 0;
  Status refused;
  for (int i = 0; i < 20000 && refused.ok(); ++i) {
    char prefix[16];
    std::snprintf(prefix, sizeof prefix, "user.%05d", i);
    refused = fs.SetXattr(f->ino, std::string(prefix) + std::string(240, 'n'), "1", 0);
    set += refused.ok();
  }
  std::atomic<uint64_t> calls{0}, errors{0};
  const auto end = Clock::now() + std::chrono::seconds(seconds);
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&] {
      while (Clock::now() < end) {
        Result<std::vector<std::string>> names = fs.ListXattr(f->ino);
        ++calls;
        if (!names.ok()) {
          ++errors;
          continue;
        }
        if (!names->empty()) (void)fs.GetXattr(f->ino, names->back());
      }
    });
  }
  for (std::thread& w : workers) w.join();
  (void)fs.Unlink(posix::kRootIno, name);
  std::printf(
      "xattr: %d names set before the server refused (%s); %llu listings in %d s by %d "
      "threads, %llu failed\n",
      set, refused.ToString().c_str(), static_cast<unsigned long long>(calls.load()), seconds,
      threads, static_cast<unsigned long long>(errors.load()));
  return 0;
}

int Usage() {
  std::fprintf(stderr,
               "usage: abuse_attack stall ADDRESS TOKEN SECONDS [CONNECTIONS]\n"
               "       abuse_attack idle ADDRESS SECONDS [CONNECTIONS] [SOURCES]\n"
               "       abuse_attack xattr ADDRESS TOKEN SECONDS [THREADS]\n");
  return 2;
}

int Int(const char* s, int fallback) {
  if (s == nullptr) return fallback;
  char* end = nullptr;
  const long v = std::strtol(s, &end, 10);
  return end != s && *end == '\0' && v > 0 && v < 1000000 ? static_cast<int>(v) : -1;
}

}  // namespace
}  // namespace archil

int main(int argc, char** argv) {
  using archil::Int;
  if (argc < 4) return archil::Usage();
  const std::string mode = argv[1], address = argv[2];
  auto arg = [&](int i) -> const char* { return i < argc ? argv[i] : nullptr; };
  if (mode == "stall" && argc >= 5) {
    const int s = Int(argv[4], 0), n = Int(arg(5), 256);
    if (s <= 0 || n <= 0) return archil::Usage();
    return archil::Stall(address, argv[3], s, n);
  }
  if (mode == "idle") {
    const int s = Int(argv[3], 0), n = Int(arg(4), 4200), k = Int(arg(5), 70);
    if (s <= 0 || n <= 0 || k <= 0 || k > 250) return archil::Usage();
    return archil::Idle(address, s, n, k);
  }
  if (mode == "xattr" && argc >= 5) {
    const int s = Int(argv[4], 0), t = Int(arg(5), 2);
    if (s <= 0 || t <= 0) return archil::Usage();
    return archil::Xattr(address, argv[3], s, t);
  }
  return archil::Usage();
}
