#include "http/http_client.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "base/test_seed.h"

namespace archil {
namespace {

TEST(UrlTest, ParsesSchemesHostsAndPorts) {
  Result<Url> u = ParseUrl("http://127.0.0.1:8420");
  ASSERT_TRUE(u.ok());
  EXPECT_FALSE(u->tls);
  EXPECT_EQ(u->host, "127.0.0.1");
  EXPECT_EQ(u->port, "8420");
  u = ParseUrl("https://[::1]/prefix/");
  ASSERT_TRUE(u.ok());
  EXPECT_TRUE(u->tls);
  EXPECT_EQ(u->host, "::1");
  EXPECT_EQ(u->port, "443");
  EXPECT_EQ(u->base_path, "/prefix");
  for (const char* bad : {"ftp://x", "http://", "http://h:0", "http://h:99999", "http://[::1",
                          "http://h:12ab", "127.0.0.1:80"}) {
    EXPECT_FALSE(ParseUrl(bad).ok()) << bad;
  }
}

TEST(HttpResponseTest, ContentLengthBody) {
  Result<HttpResponse> r = ParseHttpResponse(
      "HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}xx");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 201);
  EXPECT_EQ(r->body, "{}");
  EXPECT_EQ(r->headers[0].first, "content-type");
}

TEST(HttpResponseTest, ChunkedBody) {
  Result<HttpResponse> r = ParseHttpResponse(
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2;x=y\r\nde\r\n0\r\n\r\n");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->body, "abcde");
}

TEST(HttpResponseTest, RejectsMalformedAnswers) {
  for (const char* bad :
       {"", "garbage", "HTTP/1.1 200 OK\r\n", "HTTP/2 200 OK\r\n\r\n", "HTTP/1.1 2x0 OK\r\n\r\n",
        "HTTP/1.1 999 No\r\n\r\n", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort",
        "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", "HTTP/1.1 200 OK\r\nno colon\r\n\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab"}) {
    EXPECT_FALSE(ParseHttpResponse(bad).ok()) << bad;
  }
}

TEST(HttpResponseTest, ExpectedSizeIsKnownFromTheHeaders) {
  EXPECT_EQ(ExpectedResponseSize("HTTP/1.1 200 OK\r\nContent-Len"), 0u);
  std::string head = "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n";
  EXPECT_EQ(ExpectedResponseSize(head), head.size() + 10);
  EXPECT_EQ(ExpectedResponseSize(head + "01234"), head.size() + 10);
  EXPECT_EQ(ExpectedResponseSize("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"),
            SIZE_MAX);
  EXPECT_EQ(ExpectedResponseSize("HTTP/1.1 200 OK\r\n\r\n"), SIZE_MAX);
  EXPECT_EQ(ExpectedResponseSize("garbage\r\n\r\n"), SIZE_MAX);
  EXPECT_EQ(ExpectedResponseSize("HTTP/1.1 200 OK\r\nContent-Length: 18446744073709551615\r\n\r\n"),
            SIZE_MAX);
}

TEST(HttpResponseTest, RandomBytesNeverCrash) {
  unsigned seed = TestSeed();
  std::mt19937 rng(seed);
  const std::string base =
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: "
      "5\r\n\r\n5\r\nhello\r\n0\r\n\r\n";
  int parsed = 0, rejected = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string s = base;
    int edits = 1 + static_cast<int>(rng() % 8);
    for (int e = 0; e < edits; ++e) {
      size_t pos = rng() % s.size();
      switch (rng() % 3) {
        case 0:
          s[pos] = static_cast<char>(rng());
          break;
        case 1:
          s.erase(pos, 1 + rng() % 4);
          break;
        default:
          s.insert(pos, 1, static_cast<char>(rng()));
          break;
      }
      if (s.empty()) s = "H";
    }
    // Whatever the bytes, a parse either fails cleanly or yields a sane response, and the size
    // the headers announce never contradicts what was parsed (the fuzz target's invariants).
    Result<HttpResponse> r = ParseHttpResponse(s);
    size_t expected = ExpectedResponseSize(s);
    if (r.ok()) {
      ++parsed;
      ASSERT_GE(r->status, 100) << "seed " << seed << " input " << i;
      ASSERT_LE(r->status, 599) << "seed " << seed << " input " << i;
      ASSERT_TRUE(expected == SIZE_MAX || expected <= s.size())
          << "seed " << seed << " input " << i;
    } else {
      ++rejected;
      ASSERT_FALSE(r.status().message().empty());
    }
  }
  // The mutations must exercise both outcomes, or the test checks nothing.
  EXPECT_GT(parsed, 100);
  EXPECT_GT(rejected, 100);
}

TEST(HttpClientTest, ConnectionRefusedIsUnavailable) {
  Url u = *ParseUrl("http://127.0.0.1:1");
  HttpClientOptions o;
  o.timeout_ms = 2000;
  Result<HttpResponse> r = SendHttpRequest(u, HttpRequest{}, o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kUnavailable);
  EXPECT_NE(r.status().message().find("127.0.0.1:1"), std::string::npos);
}

// A loopback HTTP server for HttpSession's tests: each connection is served by `serve`, which
// gets the connection's number (from 0) and the socket, and reads and answers as it pleases.
class ScriptedServer {
 public:
  explicit ScriptedServer(std::function<void(int conn, int fd)> serve) : serve_(std::move(serve)) {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
    socklen_t len = sizeof(a);
    EXPECT_EQ(getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len), 0);
    port_ = ntohs(a.sin_port);
    EXPECT_EQ(listen(fd_, 16), 0);
    thread_ = std::thread([this] {
      for (int n = 0;; ++n) {
        const int c = accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
        if (c < 0) return;
        if (stop_) {
          close(c);
          return;
        }
        connections_++;
        serve_(n, c);
        close(c);
      }
    });
  }
  ~ScriptedServer() {
    stop_ = true;
    shutdown(fd_, SHUT_RDWR);
    close(fd_);
    thread_.join();
  }
  Url url() const { return *ParseUrl("http://127.0.0.1:" + std::to_string(port_)); }
  int connections() const { return connections_; }

  // Reads one request (headers and a Content-Length body); "" at the end of the stream.
  static std::string ReadRequest(int fd) {
    std::string in;
    char buf[4096];
    for (;;) {
      const size_t end = in.find("\r\n\r\n");
      if (end != std::string::npos) {
        size_t length = 0;
        const size_t cl = in.find("Content-Length: ");
        if (cl != std::string::npos && cl < end) length = std::stoul(in.substr(cl + 16));
        if (in.size() >= end + 4 + length) return in;
      }
      const ssize_t n = read(fd, buf, sizeof(buf));
      if (n <= 0) return "";
      in.append(buf, static_cast<size_t>(n));
    }
  }
  static void Answer(int fd, const std::string& body, const std::string& extra = "") {
    const std::string out = "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body.size()) +
                            "\r\n" + extra + "\r\n" + body;
    ASSERT_EQ(write(fd, out.data(), out.size()), static_cast<ssize_t>(out.size()));
  }

 private:
  std::function<void(int, int)> serve_;
  int fd_ = -1;
  int port_ = 0;
  std::atomic<int> connections_{0};
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

HttpRequest Req(const std::string& method) {
  HttpRequest r;
  r.method = method;
  r.target = "/x";
  if (method == "POST") r.body = "{}";
  return r;
}

TEST(HttpSessionTest, RequestsShareOneKeptAliveConnection) {
  ScriptedServer server([](int, int fd) {
    for (int i = 0;; ++i) {
      if (ScriptedServer::ReadRequest(fd).empty()) return;
      if (i % 2 == 0) {
        ScriptedServer::Answer(fd, "a" + std::to_string(i));
      } else {  // chunked, on the same connection: its last chunk ends it, not the stream
        const std::string body = "b" + std::to_string(i);
        const std::string out = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" +
                                std::to_string(body.size()) + "\r\n" + body + "\r\n0\r\n\r\n";
        ASSERT_EQ(write(fd, out.data(), out.size()), static_cast<ssize_t>(out.size()));
      }
    }
  });
  HttpClientOptions o;
  o.timeout_ms = 5000;
  HttpSession session(server.url(), o);
  for (int i = 0; i < 6; ++i) {
    Result<HttpResponse> r = session.Send(Req(i % 3 == 0 ? "POST" : "GET"));
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->body, (i % 2 == 0 ? "a" : "b") + std::to_string(i));
  }
  EXPECT_EQ(session.connections(), 1);
  EXPECT_EQ(server.connections(), 1);
}

// A server that says Connection: close, or closes a kept-alive connection while it is idle (its
// keep-alive timeout), gets the next request on a new connection.
TEST(HttpSessionTest, AConnectionTheServerEndedIsOpenedAgain) {
  ScriptedServer server([](int conn, int fd) {
    if (ScriptedServer::ReadRequest(fd).empty()) return;
    ScriptedServer::Answer(fd, "c" + std::to_string(conn),
                           conn == 0 ? "Connection: close\r\n" : "");
    // conn 1 and later: closed after one answer without saying so.
  });
  HttpClientOptions o;
  o.timeout_ms = 5000;
  HttpSession session(server.url(), o);
  for (int i = 0; i < 3; ++i) {
    if (i == 2) usleep(50 * 1000);  // the close has arrived: the idle connection is stale
    Result<HttpResponse> r = session.Send(Req("POST"));
    ASSERT_TRUE(r.ok()) << i << ": " << r.status().ToString();
    EXPECT_EQ(r->body, "c" + std::to_string(i));
  }
  EXPECT_EQ(server.connections(), 3);
}

// A request whose kept-alive connection breaks after it was sent, with no answer: a GET is sent
// again on a new connection, a POST is not (the server may have acted on it).
TEST(HttpSessionTest, OnlyIdempotentRequestsAreSentAgainAfterABrokenConnection) {
  std::atomic<int> posts{0};
  // The second request on the first connection is read and dropped without an answer.
  auto drop_second = [&](int conn, int fd) {
    for (int i = 0;; ++i) {
      const std::string req = ScriptedServer::ReadRequest(fd);
      if (req.empty()) return;
      if (req.rfind("POST", 0) == 0) posts++;
      if (conn == 0 && i == 1) return;
      ScriptedServer::Answer(fd, "ok");
    }
  };
  HttpClientOptions o;
  o.timeout_ms = 5000;
  ScriptedServer for_get(drop_second);
  HttpSession get(for_get.url(), o);
  ASSERT_TRUE(get.Send(Req("GET")).ok());
  Result<HttpResponse> again = get.Send(Req("GET"));
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(get.connections(), 2);

  ScriptedServer for_post(drop_second);
  HttpSession post(for_post.url(), o);
  ASSERT_TRUE(post.Send(Req("GET")).ok());
  Result<HttpResponse> lost = post.Send(Req("POST"));
  EXPECT_EQ(lost.status().code(), Status::Code::kUnavailable);
  EXPECT_EQ(posts, 1) << "a POST the server may have acted on was sent again";
  EXPECT_EQ(post.connections(), 1);
  ASSERT_TRUE(post.Send(Req("POST")).ok());  // the next request opens a new connection
  EXPECT_EQ(post.connections(), 2);
}

TEST(UrlEncodeTest, KeepsUnreserved) {
  EXPECT_EQ(UrlEncode("a-b_c.d~e"), "a-b_c.d~e");
  EXPECT_EQ(UrlEncode("a b/c?"), "a%20b%2Fc%3F");
}

}  // namespace
}  // namespace archil
