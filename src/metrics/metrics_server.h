// The scrape endpoint: GET /metrics over plain HTTP/1.1 on its own listener
// (`archil server --metrics-listen ADDR`), answered with what `render` returns, in the
// exposition format's content type. One connection at a time, one request per connection, each
// bounded: 8 KiB of request and 2 s to send it, 5 s to take the reply; anything else is 400, 404
// or 405 and the connection closes. Unauthenticated, like the format's usual endpoints: bind it
// to loopback or a private network (docs/operations.md).
//
// Thread-safety: Start/Stop from one thread; `render` runs on the server's own thread.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "base/status.h"
#include "net/socket.h"

namespace archil::metrics {

class MetricsServer {
 public:
  // Listens on `address` ("host:port", port 0 for any) and serves from a thread of its own.
  static Result<std::unique_ptr<MetricsServer>> Start(const std::string& address,
                                                      std::function<std::string()> render);
  ~MetricsServer() { Stop(); }
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;
  // Stops serving; returns once the thread has ended. Idempotent.
  void Stop();
  const std::string& address() const { return address_; }

 private:
  MetricsServer() = default;
  void Loop();
  void Serve(int fd);
  std::function<std::string()> render_;
  net::Fd listener_;
  net::Fd wake_;  // eventfd: Stop() writes it
  std::string address_;
  std::thread thread_;
};

}  // namespace archil::metrics
