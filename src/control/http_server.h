// HttpServer: serves an ApiRouter over HTTP/1.1 (HTTPS when given a certificate) with
// cpp-httplib, configured for a control plane: a pool large enough for
// 100+ concurrent keep-alive clients, a short keep-alive, read/write timeouts, a body limit that
// answers 413, and the JSON envelope on every error httplib produces itself.
//
// Thread-safety: Serve() blocks on one thread; Stop() may be called from any other.
#pragma once

#include <memory>
#include <string>

#include "base/status.h"
#include "control/api_router.h"

namespace httplib {
class Server;
}

namespace archil {

struct HttpServerOptions {
  std::string host = "127.0.0.1";
  int port = 8420;            // 0: any free port
  std::string tls_cert_file;  // both set: HTTPS
  std::string tls_key_file;
  size_t threads = 128;
  size_t max_body_bytes = 64 * 1024;
  int keep_alive_seconds = 2;
  int io_timeout_seconds = 10;
};

class HttpServer {
 public:
  // Binds the listening socket (so the port is known before Serve()).
  static Result<std::unique_ptr<HttpServer>> Bind(const HttpServerOptions& options,
                                                  const ApiRouter* router);
  ~HttpServer();

  // Accepts and serves until Stop(). Returns an error if the listener failed.
  Status Serve();
  // Stops accepting, lets in-flight requests finish, and makes Serve() return.
  void Stop();

  // True while Serve() accepts connections.
  bool running() const;
  int port() const { return port_; }
  // "http://127.0.0.1:8420" or "https://...".
  std::string url() const;

 private:
  HttpServer(std::unique_ptr<httplib::Server> server, bool tls, std::string host, int port);

  std::unique_ptr<httplib::Server> server_;
  bool tls_;
  std::string host_;
  int port_;
};

}  // namespace archil
