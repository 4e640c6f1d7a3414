#include "control/http_server.h"

#include <httplib.h>
#include <sys/socket.h>

#include "base/clock.h"
#include "base/log.h"

namespace archil {
namespace {

// httplib listens with a backlog of 5, so a burst of new connections overflows the accept queue
// and clients see resets. Linux lets listen() be called again to raise it; this exposes the
// listening socket for that.
template <typename Base>
class TunedServer : public Base {
 public:
  using Base::Base;
  void RaiseBacklog(int backlog) { ::listen(this->svr_sock_, backlog); }
};
using PlainServer = TunedServer<httplib::Server>;
using TlsServer = TunedServer<httplib::SSLServer>;

ApiRequest ToApiRequest(const httplib::Request& req) {
  ApiRequest r;
  r.method = req.method;
  // The path as sent, not httplib's percent-decoded copy: "/%61pi/tokens" must not route as
  // "/api/tokens". No route or id of the API needs an escape, so an escaped path is a 404.
  r.path = req.target.substr(0, req.target.find('?'));
  for (const auto& [k, v] : req.params) r.query.emplace(k, v);
  r.authorization = req.get_header_value("Authorization");
  r.idempotency_key = req.get_header_value("Idempotency-Key");
  r.body = req.body;
  return r;
}

std::string ReasonPhrase(int status) {
  switch (status) {
    case 400:
      return "malformed HTTP request";
    case 404:
      return "not found";
    case 405:
      return "method not allowed";
    case 414:
      return "request URI too long";
    case 416:
      return "range not satisfiable";
    default:
      return "HTTP error " + std::to_string(status);
  }
}

void Send(const ApiResponse& api, httplib::Response& res) {
  res.status = api.status;
  res.set_content(api.body, "application/json");
}

}  // namespace

HttpServer::HttpServer(std::unique_ptr<httplib::Server> server, bool tls, std::string host,
                       int port)
    : server_(std::move(server)), tls_(tls), host_(std::move(host)), port_(port) {}

HttpServer::~HttpServer() = default;

Result<std::unique_ptr<HttpServer>> HttpServer::Bind(const HttpServerOptions& o,
                                                     const ApiRouter* router) {
  bool tls = !o.tls_cert_file.empty() || !o.tls_key_file.empty();
  std::unique_ptr<httplib::Server> server;
  std::function<void()> raise_backlog;
  if (tls) {
    if (o.tls_cert_file.empty() || o.tls_key_file.empty()) {
      return Status::InvalidArgument("HTTPS needs both --tls-cert and --tls-key");
    }
    auto ssl = std::make_unique<TlsServer>(o.tls_cert_file.c_str(), o.tls_key_file.c_str());
    if (!ssl->is_valid()) {
      return Status::InvalidArgument("cannot load TLS certificate " + o.tls_cert_file + " / key " +
                                     o.tls_key_file + " (are they PEM files that match?)");
    }
    raise_backlog = [s = ssl.get()] { s->RaiseBacklog(1024); };
    server = std::move(ssl);
  } else {
    auto plain = std::make_unique<PlainServer>();
    raise_backlog = [s = plain.get()] { s->RaiseBacklog(1024); };
    server = std::move(plain);
  }

  size_t threads = o.threads;
  server->new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  server->set_keep_alive_timeout(o.keep_alive_seconds);
  server->set_keep_alive_max_count(1000);
  server->set_read_timeout(o.io_timeout_seconds, 0);
  server->set_write_timeout(o.io_timeout_seconds, 0);
  server->set_payload_max_length(o.max_body_bytes);
  server->set_tcp_nodelay(true);

  auto handler = [router](const httplib::Request& req, httplib::Response& res) {
    int64_t start = SystemClock::Instance().MonotonicNanos();
    ApiResponse api = router->Handle(ToApiRequest(req));
    Send(api, res);
    ARCHIL_LOG(kDebug) << req.method << " " << req.path << " " << api.status << " "
                       << (SystemClock::Instance().MonotonicNanos() - start) / 1000 << " us";
  };
  // The API has no byte ranges: a Range header would make httplib cut or multiply the JSON
  // envelope (a create's one-time token lost; thousands of ranges turning a list into megabytes).
  // httplib parses the header before routing, so its ranges are dropped here, before any handler.
  server->set_pre_routing_handler([](const httplib::Request& req, httplib::Response&) {
    const_cast<httplib::Request&>(req).ranges.clear();  // NOLINT: httplib offers no other hook
    return httplib::Server::HandlerResponse::Unhandled;
  });
  const char* kAll = R"(/.*)";
  server->Get(kAll, handler);
  server->Post(kAll, handler);
  server->Delete(kAll, handler);
  server->Put(kAll, handler);
  server->Patch(kAll, handler);
  server->Options(kAll, handler);

  // Errors httplib answers itself (413, 400 for a bad request line, 404 for HEAD ...) get the
  // envelope too; responses the router produced already have a body and are left alone.
  httplib::Server::HandlerWithResponse on_error = [](const httplib::Request&,
                                                     httplib::Response& res) {
    if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
    if (res.status == 413) {
      Send(ErrorResponse(Status::TooLarge("request body is too large")), res);
    } else {
      Send(ErrorResponse(res.status, res.status >= 500 ? "internal" : "bad_request",
                         ReasonPhrase(res.status)),
           res);
    }
    return httplib::Server::HandlerResponse::Handled;
  };
  server->set_error_handler(on_error);
  server->set_exception_handler(
      [](const httplib::Request& req, httplib::Response& res, const std::exception_ptr&) {
        ARCHIL_LOG(kError) << "exception while serving " << req.method << " " << req.path;
        Send(ErrorResponse(Status::Internal("internal error")), res);
      });

  int port = o.port;
  if (port == 0) {
    port = server->bind_to_any_port(o.host);
    if (port < 0) port = 0;
  } else if (!server->bind_to_port(o.host, port)) {
    port = 0;
  }
  if (port <= 0) {
    return Status::Unavailable("cannot listen on " + o.host + ":" + std::to_string(o.port) +
                               " (in use, or not an address of this machine?)");
  }
  raise_backlog();
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(server), tls, o.host, port));
}

Status HttpServer::Serve() {
  if (!server_->listen_after_bind())
    return Status::Unavailable("HTTP listener stopped with an error");
  return Status::Ok();
}

void HttpServer::Stop() { server_->stop(); }

bool HttpServer::running() const { return server_->is_running(); }

std::string HttpServer::url() const {
  std::string host = host_.find(':') != std::string::npos ? "[" + host_ + "]" : host_;
  if (host_ == "0.0.0.0") host = "127.0.0.1";
  if (host_ == "::") host = "[::1]";
  return std::string(tls_ ? "https://" : "http://") + host + ":" + std::to_string(port_);
}

}  // namespace archil
