// Reading a /metrics endpoint in tests: one GET, the body; and one sample's value.
#pragma once

#include <sys/socket.h>

#include <string>

#include "net/socket.h"

namespace archil::testing {

// The body of GET /metrics from the endpoint at `address`, or "" if it cannot be had.
inline std::string ScrapeMetrics(const std::string& address) {
  Result<net::Fd> c = net::Connect(address, 5000);
  if (!c.ok()) return std::string();
  const std::string req = "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n";
  if (::send(c->get(), req.data(), req.size(), MSG_NOSIGNAL) != ssize_t(req.size())) return "";
  std::string out;
  char buf[8192];
  for (ssize_t n; (n = ::recv(c->get(), buf, sizeof buf, 0)) > 0;) out.append(buf, size_t(n));
  if (out.rfind("HTTP/1.1 200", 0) != 0) return std::string();
  const size_t body = out.find("\r\n\r\n");
  return body == std::string::npos ? std::string() : out.substr(body + 4);
}

// The value of the sample line of `text` that starts with `series` (name and labels), or -1.
inline double MetricValue(const std::string& text, const std::string& series) {
  const size_t at = ("\n" + text).find("\n" + series + " ");
  if (at == std::string::npos) return -1;
  return std::stod(text.substr(at + series.size() + 1));
}

}  // namespace archil::testing
