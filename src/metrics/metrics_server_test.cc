#include "metrics/metrics_server.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>

namespace archil::metrics {
namespace {

// Sends `request` (and keeps the connection open `hold_ms` first if `request` is empty) and
// returns everything the server sends before it closes.
std::string Exchange(const std::string& address, const std::string& request) {
  Result<net::Fd> c = net::Connect(address, 2000);
  if (!c.ok()) return "connect: " + c.status().ToString();
  timeval tv{10, 0};
  setsockopt(c->get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  if (!request.empty()) (void)!::send(c->get(), request.data(), request.size(), MSG_NOSIGNAL);
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = ::recv(c->get(), buf, sizeof buf, 0)) > 0;) out.append(buf, size_t(n));
  return out;
}

TEST(MetricsServer, AnswersGetMetricsWithTheFormatsContentType) {
  std::atomic<int> scrapes{0};
  auto s = MetricsServer::Start("127.0.0.1:0", [&] {
    ++scrapes;
    return std::string("# HELP x_total X.\n# TYPE x_total counter\nx_total 1\n");
  });
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  const std::string addr = (*s)->address();
  const std::string r = Exchange(addr, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(r.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << r;
  EXPECT_NE(r.find("Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n"),
            std::string::npos);
  EXPECT_NE(r.find("\r\n\r\n# HELP x_total X.\n"), std::string::npos) << r;
  EXPECT_EQ(scrapes, 1);
  const std::string head = Exchange(addr, "HEAD /metrics?x=1 HTTP/1.0\r\n\r\n");
  EXPECT_EQ(head.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << head;
  EXPECT_EQ(head.find("x_total 1"), std::string::npos);
}

TEST(MetricsServer, RefusesWhatIsNotAScrapeAndSurvivesBadClients) {
  auto s = MetricsServer::Start("127.0.0.1:0", [] { return std::string("x 1\n"); });
  ASSERT_TRUE(s.ok());
  const std::string addr = (*s)->address();
  EXPECT_EQ(Exchange(addr, "GET / HTTP/1.1\r\n\r\n").rfind("HTTP/1.1 404", 0), 0u);
  const std::string post = Exchange(addr, "POST /metrics HTTP/1.1\r\n\r\n");
  EXPECT_EQ(post.rfind("HTTP/1.1 405", 0), 0u);
  EXPECT_NE(post.find("Allow: GET, HEAD\r\n"), std::string::npos);
  EXPECT_EQ(Exchange(addr, "garbage\r\n\r\n").rfind("HTTP/1.1 400", 0), 0u);
  EXPECT_EQ(Exchange(addr, std::string(20000, 'a')).rfind("HTTP/1.1 400", 0), 0u);
  // A client that connects and says nothing is dropped after 2 s; the next scrape is answered.
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(Exchange(addr, ""), "");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_EQ(Exchange(addr, "GET /metrics HTTP/1.1\r\n\r\n").rfind("HTTP/1.1 200", 0), 0u);
  (*s)->Stop();
  (*s)->Stop();  // idempotent
}

}  // namespace
}  // namespace archil::metrics
