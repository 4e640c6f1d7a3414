// tcp_pingpong: the network floor of one client->server round trip on this machine: a 64-byte
// request answered by a 4 KiB reply over loopback TCP with TCP_NODELAY, client and server in
// separate processes (as the FUSE client and the disk server will be), blocking sockets, one
// request in flight. Prints p50/p95/p99 of the round trip in us.
//
// Usage: tcp_pingpong [--iters 20000] [--floor]     (--floor prints just "p50_ms p95_ms")

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

constexpr size_t kRequest = 64, kReply = 4096;

void Check(bool ok, const char* what) {
  if (!ok) {
    std::perror(what);
    std::exit(1);
  }
}

// Reads exactly n bytes; false on EOF.
bool ReadFull(int fd, char* p, size_t n) {
  while (n > 0) {
    ssize_t r = read(fd, p, n);
    if (r <= 0) return false;
    p += r;
    n -= r;
  }
  return true;
}

void WriteFull(int fd, const char* p, size_t n) {
  while (n > 0) {
    ssize_t r = write(fd, p, n);
    Check(r > 0, "write");
    p += r;
    n -= r;
  }
}

void NoDelay(int fd) {
  int one = 1;
  Check(setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) == 0, "TCP_NODELAY");
}

double Pct(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  size_t rank = static_cast<size_t>((v.size() * p + 99) / 100);
  return v[std::clamp<size_t>(rank, 1, v.size()) - 1];
}

}  // namespace

int main(int argc, char** argv) {
  int iters = 20000;
  bool floor = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--iters" && i + 1 < argc)
      iters = std::stoi(argv[++i]);
    else if (a == "--floor")
      floor = true;
    else {
      std::fprintf(stderr, "usage: tcp_pingpong [--iters N] [--floor]\n");
      return 2;
    }
  }

  int ls = socket(AF_INET, SOCK_STREAM, 0);
  Check(ls >= 0, "socket");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  Check(bind(ls, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0, "bind");
  Check(listen(ls, 1) == 0, "listen");
  socklen_t len = sizeof addr;
  Check(getsockname(ls, reinterpret_cast<sockaddr*>(&addr), &len) == 0, "getsockname");

  pid_t server = fork();
  Check(server >= 0, "fork");
  if (server == 0) {  // Server: answer each 64-byte request with 4 KiB until EOF.
    int c = accept(ls, nullptr, nullptr);
    Check(c >= 0, "accept");
    NoDelay(c);
    char req[kRequest], reply[kReply];
    std::memset(reply, 'r', sizeof reply);
    while (ReadFull(c, req, sizeof req)) WriteFull(c, reply, sizeof reply);
    _exit(0);
  }
  close(ls);

  int s = socket(AF_INET, SOCK_STREAM, 0);
  Check(s >= 0, "socket");
  Check(connect(s, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0, "connect");
  NoDelay(s);
  char req[kRequest], reply[kReply];
  std::memset(req, 'q', sizeof req);
  std::vector<double> us;
  us.reserve(iters);
  const int warmup = 1000;
  for (int i = 0; i < warmup + iters; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    WriteFull(s, req, sizeof req);
    Check(ReadFull(s, reply, sizeof reply), "read reply");
    auto t1 = std::chrono::steady_clock::now();
    if (i >= warmup) us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
  }
  close(s);
  waitpid(server, nullptr, 0);

  if (floor) {
    std::printf("%.4f %.4f\n", Pct(us, 50) / 1000, Pct(us, 95) / 1000);
  } else {
    std::printf("loopback TCP ping-pong, %zu B request / %zu B reply, TCP_NODELAY, %d iters\n",
                kRequest, kReply, iters);
    std::printf("p50 %.1f us  p95 %.1f us  p99 %.1f us\n", Pct(us, 50), Pct(us, 95), Pct(us, 99));
  }
  return 0;
}
