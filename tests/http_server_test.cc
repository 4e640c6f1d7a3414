// The API server (src/control/http_server.h) against hostile and unusual clients, over raw
// sockets: slow and idle connections must not stall anyone else, deadlines are totals, framing is
// strict, pipelined requests are all answered in order, and the connection caps hold per peer.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sqlite3.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "control_plane_harness.h"

namespace archil {
namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

double SecondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// A TCP connection to 127.0.0.1:port from `source` (another loopback address is another peer).
// -1 on failure. Reads time out after `timeout_ms`.
int Connect(int port, const char* source = nullptr, int timeout_ms = 5000) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  if (source != nullptr) {
    sockaddr_in src{};
    src.sin_family = AF_INET;
    inet_pton(AF_INET, source, &src.sin_addr);
    if (::bind(fd, reinterpret_cast<sockaddr*>(&src), sizeof src) != 0) {
      ::close(fd);
      return -1;
    }
  }
  timeval tv{timeout_ms / 1000, (timeout_ms % 1000) * 1000};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

bool SendAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

struct Received {
  std::string data;
  bool closed = false;  // the server closed (EOF or reset), rather than the read timing out
};

// Reads until the server closes the connection or a read times out.
Received ReadToClose(int fd) {
  Received r;
  char buf[65536];
  for (;;) {
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n > 0) {
      r.data.append(buf, static_cast<size_t>(n));
      continue;
    }
    r.closed = n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK);
    return r;
  }
}

// The body of the last response in `data` (after its blank line), parsed.
json LastBody(const std::string& data) {
  size_t at = data.rfind("\r\n\r\n");
  if (at == std::string::npos) return json();
  return json::parse(data.substr(at + 4), nullptr, false);
}

// GET /api/health on a new connection; the time to the full answer, or -1 if it failed.
double TimedHealth(int port, const char* source = nullptr) {
  Clock::time_point start = Clock::now();
  int fd = Connect(port, source, 1000);
  if (fd < 0) return -1;
  SendAll(fd, "GET /api/health HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n");
  Received r = ReadToClose(fd);
  ::close(fd);
  if (!r.closed || r.data.rfind("HTTP/1.1 200", 0) != 0) return -1;
  return SecondsSince(start);
}

class HttpServerTest : public ::testing::Test {
 protected:
  HttpServerTest() : cp_(::testing::UnitTest::GetInstance()->current_test_info()->name()) {}
  ~HttpServerTest() override {
    for (int fd : fds_) ::close(fd);
  }

  int Keep(int fd) {
    if (fd >= 0) fds_.push_back(fd);
    return fd;
  }

  testing::ControlPlaneHarness cp_;
  std::vector<int> fds_;
};

// 200 slowloris sockets (a header byte a second) and 3,000 idle connections: /api/health on a new
// connection still answers within 1 s (the thread-per-connection server answered nothing).
TEST_F(HttpServerTest, SlowAndIdleConnectionsDoNotStallOthers) {
  rlimit lim{};
  getrlimit(RLIMIT_NOFILE, &lim);
  lim.rlim_cur = lim.rlim_max;
  setrlimit(RLIMIT_NOFILE, &lim);
  if (lim.rlim_cur < 8000) GTEST_SKIP() << "needs 8000 file descriptors";
  HttpServerOptions o;
  o.max_connections = 8192;
  o.max_connections_per_peer = 8192;
  cp_.Start(o);
  const int port = cp_.port();

  std::vector<int> slow;
  for (int i = 0; i < 200; ++i) {
    int fd = Keep(Connect(port));
    ASSERT_GE(fd, 0);
    SendAll(fd, "GET /api/health HTTP/1.1\r\n");
    slow.push_back(fd);
  }
  for (int i = 0; i < 3000; ++i) ASSERT_GE(Keep(Connect(port)), 0) << i;

  std::atomic<bool> done{false};
  std::thread drip([&] {
    while (!done) {
      for (int fd : slow) ::send(fd, "X", 1, MSG_NOSIGNAL);
      for (int i = 0; i < 10 && !done; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });
  Clock::time_point start = Clock::now();
  int answered = 0;
  while (SecondsSince(start) < 4) {
    double t = TimedHealth(port);
    EXPECT_GE(t, 0) << "health failed";
    EXPECT_LT(t, 1.0);
    if (t >= 0) ++answered;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  done = true;
  drip.join();
  EXPECT_GE(answered, 10);
}

// The head budget is a total, not an inactivity timer: a head sent a byte every 100 ms is cut off
// at the budget, answered 408 with the API's envelope, and the connection closed.
TEST_F(HttpServerTest, SlowHeadIsAnswered408AtTheBudget) {
  HttpServerOptions o;
  o.head_timeout_ms = 1000;
  cp_.Start(o);
  Clock::time_point start = Clock::now();
  int fd = Keep(Connect(cp_.port(), nullptr, 5000));
  ASSERT_GE(fd, 0);
  SendAll(fd, "GET /api/health HTTP/1.1\r\n");
  std::atomic<bool> done{false};
  std::thread drip([&] {
    while (!done && SecondsSince(start) < 5) {
      if (::send(fd, "X", 1, MSG_NOSIGNAL) <= 0) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });
  Received r = ReadToClose(fd);
  double elapsed = SecondsSince(start);
  done = true;
  drip.join();
  EXPECT_TRUE(r.closed);
  EXPECT_GE(elapsed, 0.9);
  EXPECT_LT(elapsed, 2.0);
  ASSERT_EQ(r.data.rfind("HTTP/1.1 408", 0), 0u) << r.data;
  json j = LastBody(r.data);
  EXPECT_EQ(j.value("code", ""), "timeout") << r.data;
  EXPECT_NE(j.value("error", "").find("head not received within 1000 ms"), std::string::npos)
      << r.data;
}

// The body has a budget of its own, from the end of the head: a body that stops half way is
// answered 408 at that budget, and nothing of the request is applied.
TEST_F(HttpServerTest, StalledBodyIsAnswered408AtItsBudget) {
  HttpServerOptions o;
  o.body_timeout_ms = 500;
  cp_.Start(o);
  int fd = Keep(Connect(cp_.port(), nullptr, 5000));
  ASSERT_GE(fd, 0);
  const std::string body = R"({"name":"half-sent"})";
  Clock::time_point start = Clock::now();
  SendAll(fd, "POST /api/disks HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer " + cp_.admin_key() +
                  "\r\nContent-Type: application/json\r\nContent-Length: " +
                  std::to_string(body.size()) + "\r\n\r\n" + body.substr(0, 5));
  Received r = ReadToClose(fd);
  double elapsed = SecondsSince(start);
  EXPECT_TRUE(r.closed);
  EXPECT_GE(elapsed, 0.45);
  EXPECT_LT(elapsed, 2.0);
  ASSERT_EQ(r.data.rfind("HTTP/1.1 408", 0), 0u) << r.data;
  EXPECT_NE(LastBody(r.data).value("error", "").find("body not received within 500 ms"),
            std::string::npos)
      << r.data;
  Result<Page<Disk>> disks = cp_.service()->ListDisks(PageRequest{}, "half-sent");
  ASSERT_TRUE(disks.ok()) << disks.status().ToString();
  EXPECT_TRUE(disks->items.empty());
}

// Requests that wait on nothing are answered on the I/O thread: with the only handler thread
// waiting on the catalog's write lock (held by another connection to the database), health, the
// region and the list of disks (read on the catalog's reader connection) still answer at once,
// and the create answers once the lock is released.
TEST_F(HttpServerTest, ReadsAreAnsweredWhileEveryHandlerWaitsOnACommit) {
  HttpServerOptions o;
  o.threads = 1;
  cp_.Start(o);
  ASSERT_GE(TimedHealth(cp_.port()), 0);  // up and serving
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((cp_.dir() / "catalog.db").string().c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);

  int create = Keep(Connect(cp_.port(), nullptr, 8000));
  ASSERT_GE(create, 0);
  const std::string body = R"({"name":"behind-the-lock"})";
  SendAll(create, "POST /api/disks HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer " +
                      cp_.admin_key() + "\r\nContent-Type: application/json\r\nContent-Length: " +
                      std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the handler waits on the lock
  pollfd waiting{create, POLLIN, 0};
  EXPECT_EQ(::poll(&waiting, 1, 0), 0) << "the create cannot have committed yet";

  for (int i = 0; i < 3; ++i) {
    double t = TimedHealth(cp_.port());
    EXPECT_GE(t, 0);
    EXPECT_LT(t, 1.0);
    Clock::time_point start = Clock::now();
    int fd = Keep(Connect(cp_.port(), nullptr, 2000));
    ASSERT_GE(fd, 0);
    SendAll(fd, "GET /api/region HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n");
    Received r = ReadToClose(fd);
    EXPECT_EQ(r.data.rfind("HTTP/1.1 200", 0), 0u) << r.data;
    EXPECT_LT(SecondsSince(start), 1.0);
    start = Clock::now();
    int list = Keep(Connect(cp_.port(), nullptr, 2000));
    ASSERT_GE(list, 0);
    SendAll(list, "GET /api/disks HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer " + cp_.admin_key() +
                      "\r\nConnection: close\r\n\r\n");
    Received listed = ReadToClose(list);
    EXPECT_EQ(listed.data.rfind("HTTP/1.1 200", 0), 0u) << listed.data;
    EXPECT_LT(SecondsSince(start), 1.0);
  }
  ASSERT_EQ(sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  Received created = ReadToClose(create);
  EXPECT_EQ(created.data.rfind("HTTP/1.1 201", 0), 0u) << created.data;
}

// Range means nothing to the API: a create answers 201 with its whole body (and its one-time
// token), and thousands of ranges never multiply a response.
TEST_F(HttpServerTest, RangeIsIgnored) {
  cp_.Start();
  int fd = Keep(Connect(cp_.port()));
  ASSERT_GE(fd, 0);
  std::string body = R"({"name":"ranged"})";
  SendAll(fd, "POST /api/disks HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer " + cp_.admin_key() +
                  "\r\nContent-Type: application/json\r\nRange: bytes=0-20\r\nContent-Length: " +
                  std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body);
  Received r = ReadToClose(fd);
  ASSERT_EQ(r.data.rfind("HTTP/1.1 201", 0), 0u) << r.data;
  json j = LastBody(r.data);
  ASSERT_TRUE(j.is_object()) << r.data;
  EXPECT_EQ(j["data"]["authorizedUsers"][0]["token"].get<std::string>().substr(0, 4), "adt_");

  std::string many = "bytes=0-0";
  for (int i = 1; i < 2000; ++i) many += ",0-0";
  int fd2 = Keep(Connect(cp_.port()));
  SendAll(fd2, "GET /api/disks HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer " + cp_.admin_key() +
                   "\r\nRange: " + many + "\r\nConnection: close\r\n\r\n");
  Received r2 = ReadToClose(fd2);
  ASSERT_EQ(r2.data.rfind("HTTP/1.1 200", 0), 0u) << r2.data.substr(0, 200);
  EXPECT_LT(r2.data.size(), 4096u);
  EXPECT_TRUE(LastBody(r2.data).is_object());
}

// Requests sent together on one connection are all answered, in order.
TEST_F(HttpServerTest, PipelinedRequestsAreAnsweredInOrder) {
  cp_.Start();
  int fd = Keep(Connect(cp_.port()));
  ASSERT_GE(fd, 0);
  SendAll(fd,
          "GET /api/health HTTP/1.1\r\nHost: a\r\n\r\n"
          "GET /api/no-such-route HTTP/1.1\r\nHost: a\r\n\r\n"
          "GET /api/health HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n");
  Received r = ReadToClose(fd);
  EXPECT_TRUE(r.closed);
  size_t first = r.data.find("HTTP/1.1 200");
  size_t second = r.data.find("HTTP/1.1 401");  // unknown routes need a key first
  size_t third = r.data.find("HTTP/1.1 200", first + 1);
  ASSERT_NE(first, std::string::npos) << r.data;
  ASSERT_NE(second, std::string::npos) << r.data;
  ASSERT_NE(third, std::string::npos) << r.data;
  EXPECT_LT(first, second);
  EXPECT_LT(second, third);
}

// Ambiguous framing (the stuff of request smuggling) is a 400 in the envelope, then a close.
TEST_F(HttpServerTest, AmbiguousFramingIs400AndClose) {
  cp_.Start();
  const std::string head = "POST /api/disks HTTP/1.1\r\nHost: a\r\n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"two Content-Lengths", "Content-Length: 5\r\nContent-Length: 6\r\n\r\n{}{}{}"},
      {"Content-Length and chunked",
       "Content-Length: 7\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n"},
      {"gzip", "Transfer-Encoding: gzip\r\n\r\n{}"},
      {"gzip, chunked", "Transfer-Encoding: gzip, chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n"},
      {"negative chunk size", "Transfer-Encoding: chunked\r\n\r\n-2\r\n{}\r\n0\r\n\r\n"},
      {"bad chunk size", "Transfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n"},
  };
  for (const auto& [name, rest] : cases) {
    int fd = Keep(Connect(cp_.port(), nullptr, 3000));
    ASSERT_GE(fd, 0);
    Clock::time_point start = Clock::now();
    SendAll(fd, head + rest);
    Received r = ReadToClose(fd);
    EXPECT_EQ(r.data.rfind("HTTP/1.1 400", 0), 0u) << name << ": " << r.data;
    EXPECT_TRUE(r.closed) << name;
    EXPECT_LT(SecondsSince(start), 2.0) << name;
    json j = LastBody(r.data);
    EXPECT_TRUE(j.is_object() && j["success"] == false && j["code"] == "invalid_argument")
        << name << ": " << r.data;
  }
}

// The server's own errors carry the envelope: a body over the limit is 413, an oversized head 431,
// and PUT without a body on a route without PUT is the router's 405.
TEST_F(HttpServerTest, LimitsAnswerInTheEnvelope) {
  HttpServerOptions o;
  o.max_body_bytes = 1024;
  cp_.Start(o);
  auto send = [&](const std::string& request) {
    int fd = Keep(Connect(cp_.port(), nullptr, 3000));
    SendAll(fd, request);
    return ReadToClose(fd).data;
  };
  std::string big(2048, 'x');
  std::string r = send("POST /api/disks HTTP/1.1\r\nHost: a\r\nContent-Length: 2048\r\n\r\n" + big);
  EXPECT_EQ(r.rfind("HTTP/1.1 413", 0), 0u) << r;
  EXPECT_EQ(LastBody(r)["code"], "too_large") << r;
  r = send("GET /api/health HTTP/1.1\r\nHost: a\r\nX: " + std::string(20000, 'y') + "\r\n\r\n");
  EXPECT_EQ(r.rfind("HTTP/1.1 431", 0), 0u) << r.substr(0, 200);
  EXPECT_EQ(LastBody(r)["success"], false);
  r = send("PUT /api/health HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(r.rfind("HTTP/1.1 405", 0), 0u) << r;
  EXPECT_EQ(LastBody(r)["code"], "method_not_allowed") << r;
}

// Over the per-peer cap a new connection is closed at once, while another peer is still served.
TEST_F(HttpServerTest, PerPeerCapRefusesOnlyThatPeer) {
  HttpServerOptions o;
  o.max_connections_per_peer = 4;
  cp_.Start(o);
  for (int i = 0; i < 4; ++i) ASSERT_GE(Keep(Connect(cp_.port(), "127.0.0.1")), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // accepted and counted
  int over = Keep(Connect(cp_.port(), "127.0.0.1", 2000));
  ASSERT_GE(over, 0);  // the kernel accepts; the server closes it
  SendAll(over, "GET /api/health HTTP/1.1\r\nHost: a\r\n\r\n");
  Received r = ReadToClose(over);
  EXPECT_TRUE(r.closed);
  EXPECT_EQ(r.data.find("HTTP/1.1 200"), std::string::npos) << r.data;
  double t = TimedHealth(cp_.port(), "127.0.0.2");
  EXPECT_GE(t, 0) << "another peer must be served";
}

// Sockets that never send a request cannot fill the server: past the pool of connections
// without a whole request head (or at the total), the oldest of them is closed for the new one.
TEST_F(HttpServerTest, IdleSocketsMakeRoomForClientsThatTalk) {
  HttpServerOptions o;
  o.max_connections = 64;
  o.max_connections_per_peer = 1000;
  o.max_unproven_connections = 16;
  o.head_timeout_ms = 60000;  // the pool, not the deadline, must make the room
  cp_.Start(o);
  std::vector<int> idle;
  for (int i = 0; i < 200; ++i) {
    const int fd = Keep(Connect(cp_.port(), "127.0.0.1"));
    ASSERT_GE(fd, 0);
    idle.push_back(fd);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // accepted, and the oldest closed
  for (int i = 0; i < 5; ++i) {
    const double t = TimedHealth(cp_.port(), "127.0.0.1");
    EXPECT_GE(t, 0) << "health failed";
    EXPECT_LT(t, 1.0);
  }
  Received first = ReadToClose(idle.front());
  EXPECT_TRUE(first.closed) << "the oldest idle socket was closed";
  pollfd newest{idle.back(), POLLIN, 0};
  EXPECT_EQ(::poll(&newest, 1, 0), 0) << "the newest still waits";
}

// No SO_REUSEPORT: a second server on a port in use fails to bind, saying so.
TEST_F(HttpServerTest, SecondServerOnThePortFailsToBind) {
  cp_.Start();
  ApiRouter router(nullptr);
  HttpServerOptions o;
  o.port = cp_.port();
  auto second = HttpServer::Bind(o, &router);
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.status().message().find("in use"), std::string::npos)
      << second.status().ToString();
}

}  // namespace
}  // namespace archil
