#include "control/http_server.h"

#include <openssl/ssl.h>

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <optional>
#include <thread>
#include <vector>

#include "base/log.h"
#include "base/thread_name.h"
#include "control/connection_limits.h"
#include "control/handler_pool.h"
#include "control/http_session.h"

namespace archil {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using boost::system::error_code;

class HttpServer::Impl {
 public:
  Impl(const HttpServerOptions& o, const ApiRouter* router)
      : options_(o),
        limits_(o.max_connections, o.max_connections_per_peer, o.max_unproven_connections),
        iocs_(MakeContexts(o.io_threads)),
        ioc_(*iocs_.front()),
        acceptor_(asio::make_strand(ioc_)),
        retry_(acceptor_.get_executor()),
        pool_(o.threads, o.max_connections) {
    config_.router = router;
    config_.pool = &pool_;
    config_.after_reply = &after_reply_;
    config_.in_flight = &in_flight_;
    config_.handshake_timeout = std::chrono::milliseconds(o.tls_handshake_timeout_ms);
    config_.head_timeout = std::chrono::milliseconds(o.head_timeout_ms);
    config_.body_timeout = std::chrono::milliseconds(o.body_timeout_ms);
    config_.write_timeout = std::chrono::seconds(o.io_timeout_seconds);
    config_.keep_alive = std::chrono::seconds(o.keep_alive_seconds);
    config_.max_body_bytes = o.max_body_bytes;
    config_.max_header_bytes = o.max_header_bytes;
    config_.max_target_bytes = o.max_target_bytes;
    config_.max_requests = o.max_requests_per_connection;
  }

  Status LoadTls() {
    tls_.emplace(asio::ssl::context::tls_server);
    tls_->set_options(asio::ssl::context::default_workarounds | asio::ssl::context::no_sslv2 |
                      asio::ssl::context::no_sslv3 | asio::ssl::context::no_tlsv1 |
                      asio::ssl::context::no_tlsv1_1);
    error_code ec;
    tls_->use_certificate_chain_file(options_.tls_cert_file, ec);
    if (!ec) tls_->use_private_key_file(options_.tls_key_file, asio::ssl::context::pem, ec);
    if (ec || SSL_CTX_check_private_key(tls_->native_handle()) != 1) {
      return Status::InvalidArgument("cannot load TLS certificate " + options_.tls_cert_file +
                                     " / key " + options_.tls_key_file +
                                     " (are they PEM files that match?)");
    }
    return Status::Ok();
  }

  Result<int> Listen() {
    const HttpServerOptions& o = options_;
    auto fail = [&o](const error_code& ec) {
      return Status::Unavailable("cannot listen on " + o.host + ":" + std::to_string(o.port) +
                                 ": " + ec.message() +
                                 " (in use, or not an address of this machine?)");
    };
    error_code ec;
    tcp::resolver resolver(ioc_);
    auto endpoints = resolver.resolve(o.host, std::to_string(o.port),
                                      tcp::resolver::passive | tcp::resolver::numeric_service, ec);
    if (ec || endpoints.empty()) return fail(ec ? ec : asio::error::host_not_found);
    tcp::endpoint endpoint = endpoints.begin()->endpoint();
    // SO_REUSEADDR (a restart binds while old connections sit in TIME_WAIT), never SO_REUSEPORT:
    // a second server on the same port must fail here.
    acceptor_.open(endpoint.protocol(), ec);
    if (!ec) acceptor_.set_option(tcp::acceptor::reuse_address(true), ec);
    if (!ec) acceptor_.bind(endpoint, ec);
    if (!ec) acceptor_.listen(o.listen_backlog, ec);
    if (ec) return fail(ec);
    return acceptor_.local_endpoint(ec).port();
  }

  void Serve() {
    running_ = true;
    asio::post(acceptor_.get_executor(), [this] { Accept(); });
    // Keeps every context's run() going while it has no connection yet.
    std::vector<asio::executor_work_guard<asio::io_context::executor_type>> busy;
    for (auto& ioc : iocs_) busy.push_back(asio::make_work_guard(*ioc));
    std::vector<std::thread> threads;
    for (size_t i = 1; i < iocs_.size(); ++i) {
      threads.emplace_back([this, i] {
        NameThisThread("http-io-" + std::to_string(i));
        iocs_[i]->run();
      });
    }
    ioc_.run();
    for (std::thread& t : threads) t.join();
    running_ = false;
  }

  void Stop() {
    running_ = false;
    asio::post(acceptor_.get_executor(), [this] {
      error_code ignored;
      acceptor_.close(ignored);
      retry_.cancel();
    });
    for (int i = 0; i < 1000 && in_flight_.load() > 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    for (auto& ioc : iocs_) ioc->stop();
  }

  bool running() const { return running_; }

 private:
  // One io_context per I/O thread, run by that thread alone: a connection stays on the thread it
  // was given, and no thread wakes another to share its events (two threads on one context cost
  // GET /api/health 0.24 ms where one takes 0.20: docs/adr/0026-one-hand-off-and-408.md).
  static std::vector<std::unique_ptr<asio::io_context>> MakeContexts(size_t threads) {
    std::vector<std::unique_ptr<asio::io_context>> out;
    for (size_t i = 0; i < std::max<size_t>(threads, 1); ++i) {
      out.push_back(std::make_unique<asio::io_context>(1));
    }
    return out;
  }

  // The context of the next connection: round robin.
  asio::io_context& NextContext() { return *iocs_[next_++ % iocs_.size()]; }

  void Accept() {
    acceptor_.async_accept(
        asio::make_strand(NextContext()), [this](error_code ec, tcp::socket socket) {
          if (ec == asio::error::operation_aborted || !acceptor_.is_open()) return;
          if (ec) {
            // Out of file descriptors (or another transient failure): retry shortly rather than
            // spin.
            ARCHIL_LOG(kWarn) << "API accept failed: " << ec.message();
            retry_.expires_after(std::chrono::milliseconds(50));
            retry_.async_wait([this](error_code wait_ec) {
              if (!wait_ec) Accept();
            });
            return;
          }
          error_code peer_ec;
          tcp::endpoint peer = socket.remote_endpoint(peer_ec);
          std::unique_ptr<ConnectionLimits::Slot> slot;
          if (!peer_ec) slot = limits_.Acquire(peer.address().to_string());
          if (slot) {
            StartSession(std::move(socket), tls_ ? &*tls_ : nullptr, &config_, std::move(slot));
          } else {
            error_code ignored;
            socket.close(ignored);  // over a cap: refused at once, nothing read or written
          }
          Accept();
        });
  }

  const HttpServerOptions options_;
  std::optional<asio::ssl::context> tls_;
  ConnectionLimits limits_;
  std::atomic<int> in_flight_{0};
  SessionConfig config_;
  std::atomic<bool> running_{false};
  std::vector<std::unique_ptr<asio::io_context>> iocs_;
  asio::io_context& ioc_;  // the first: the acceptor's, run by Serve()'s thread
  size_t next_ = 0;        // on the acceptor's strand
  tcp::acceptor acceptor_;
  asio::steady_timer retry_;
  AfterReplyRunner after_reply_;  // outlives pool_, whose last tasks post to it
  HandlerPool pool_;              // destroyed first: its last tasks post to ioc_
};

HttpServer::HttpServer(std::unique_ptr<Impl> impl, bool tls, std::string host, int port)
    : impl_(std::move(impl)), tls_(tls), host_(std::move(host)), port_(port) {}

HttpServer::~HttpServer() = default;

Result<std::unique_ptr<HttpServer>> HttpServer::Bind(const HttpServerOptions& o,
                                                     const ApiRouter* router) {
  bool tls = !o.tls_cert_file.empty() || !o.tls_key_file.empty();
  auto impl = std::make_unique<Impl>(o, router);
  if (tls) {
    if (o.tls_cert_file.empty() || o.tls_key_file.empty()) {
      return Status::InvalidArgument("HTTPS needs both --tls-cert and --tls-key");
    }
    ARCHIL_RETURN_IF_ERROR(impl->LoadTls());
  }
  ARCHIL_ASSIGN_OR_RETURN(int port, impl->Listen());
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(impl), tls, o.host, port));
}

Status HttpServer::Serve() {
  impl_->Serve();
  return Status::Ok();
}

void HttpServer::Stop() { impl_->Stop(); }

bool HttpServer::running() const { return impl_->running(); }

std::string HttpServer::url() const {
  std::string host = host_.find(':') != std::string::npos ? "[" + host_ + "]" : host_;
  if (host_ == "0.0.0.0") host = "127.0.0.1";
  if (host_ == "::") host = "[::1]";
  return std::string(tls_ ? "https://" : "http://") + host + ":" + std::to_string(port_);
}

}  // namespace archil
