// HttpServer: serves an ApiRouter over HTTP/1.1 (HTTPS when given a certificate), event-driven on
// Boost.Beast/Asio (docs/adr/0016-event-driven-api-server.md): a few I/O threads run every
// connection (http_session.h), the router's blocking handlers run on a bounded HandlerPool, and
// no client can hold the server: total deadlines for a TLS handshake, a request head and a body
// (not inactivity timers; a head or body over its budget is answered 408), a short keep-alive, and
// caps on connections in total, per peer address and not yet proven by a request
// (control/connection_limits.h). Errors it answers itself carry the JSON envelope. Range is
// ignored but on a share link's download (http_session.h).
//
// Thread-safety: Serve() blocks on one thread; Stop() may be called from any other.
#pragma once

#include <memory>
#include <string>

#include "base/status.h"
#include "control/api_router.h"

namespace archil {

struct HttpServerOptions {
  std::string host = "127.0.0.1";
  int port = 8420;            // 0: any free port
  std::string tls_cert_file;  // both set: HTTPS
  std::string tls_key_file;
  size_t threads = 128;   // handler threads (the router's handlers block on SQLite commits)
  size_t io_threads = 2;  // each runs its own event loop; connections are dealt round robin
  size_t max_body_bytes = 64 * 1024;     // 413 beyond
  size_t max_header_bytes = 16 * 1024;   // request line and headers; 431 beyond
  size_t max_target_bytes = 8 * 1024;    // 414 beyond
  int keep_alive_seconds = 2;            // idle between requests on one connection
  int io_timeout_seconds = 10;           // writing one response, total
  int head_timeout_ms = 10000;           // reading a request line and headers, total
  int body_timeout_ms = 10000;           // reading a body, total
  int tls_handshake_timeout_ms = 10000;  // total
  size_t max_connections = 4096;
  size_t max_connections_per_peer = 256;  // per peer address (an IPv4 host, an IPv6 /64)
  // Connections that have not sent a whole request head yet; when full (or at
  // max_connections), the oldest of them is closed to let a new one in.
  size_t max_unproven_connections = 256;
  size_t max_requests_per_connection = 1000;
  int listen_backlog = 1024;
};

class HttpServer {
 public:
  // Binds the listening socket (so the port is known before Serve()).
  static Result<std::unique_ptr<HttpServer>> Bind(const HttpServerOptions& options,
                                                  const ApiRouter* router);
  ~HttpServer();

  // Accepts and serves until Stop(). Returns an error if the listener failed.
  Status Serve();
  // Stops accepting, lets in-flight requests finish (5 s at most), and makes Serve() return.
  void Stop();

  // True while Serve() accepts connections.
  bool running() const;
  int port() const { return port_; }
  // "http://127.0.0.1:8420" or "https://...".
  std::string url() const;

 private:
  class Impl;
  HttpServer(std::unique_ptr<Impl> impl, bool tls, std::string host, int port);

  std::unique_ptr<Impl> impl_;
  bool tls_;
  std::string host_;
  int port_;
};

}  // namespace archil
