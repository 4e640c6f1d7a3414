// TLS for the disk protocol (docs/adr/0012-data-plane-tls.md): a server or client context, and
// a Stream that runs TLS 1.3 over a non-blocking socket with OpenSSL.
//
// OpenSSL forbids using one connection object from two threads at once, and the disk protocol
// has one thread receiving while others send. So a TlsStream guards its connection object with
// a mutex held only for the duration of one OpenSSL call, never while waiting on the socket:
// the receiver and a sender alternate call by call, and neither blocks the other (a send that
// finds the socket full waits in poll without the mutex, then retries the same write). Writers
// are serialized by the caller, as for every Stream.
//
// Kernel TLS would take the record layer off both threads' paths, but this kernel offers no
// "tls" upper-layer protocol (/proc/sys/net/ipv4/tcp_available_ulp), so the stream does the
// record layer in user space; its measured cost is in docs/measurements.md §11.
//
// Thread-safety: contexts are immutable after creation and shared; streams as stream.h says.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "base/mutex.h"
#include "base/status.h"
#include "net/stream.h"

using SSL_CTX = struct ssl_ctx_st;
using SSL = struct ssl_st;

namespace archil::net {

class TlsContext {
 public:
  // Both ends name the application protocol with ALPN (`alpn`, e.g. "archil/1"): a server
  // refuses a client that does not offer it, and a client a server that does not choose it, so
  // a mount that reaches an HTTPS port (or the reverse) fails at once, saying so.
  //
  // A server's context from PEM files: the certificate (chain) and its private key.
  // InvalidArgument naming the file and OpenSSL's reason if either does not load or they do
  // not match.
  static Result<std::shared_ptr<TlsContext>> Server(const std::string& cert_file,
                                                    const std::string& key_file,
                                                    const std::string& alpn = kArchilAlpn);
  // A client's context that trusts the PEM bundle `ca_file`, or the system store if empty.
  static Result<std::shared_ptr<TlsContext>> Client(const std::string& ca_file,
                                                    const std::string& alpn = kArchilAlpn);
  static constexpr char kArchilAlpn[] = "archil/1";
  ~TlsContext();
  TlsContext(const TlsContext&) = delete;
  TlsContext& operator=(const TlsContext&) = delete;

  bool server() const { return server_; }
  SSL_CTX* get() const { return ctx_; }
  // The ALPN protocol in wire form (length-prefixed).
  const std::string& alpn_wire() const { return alpn_wire_; }

 private:
  TlsContext(SSL_CTX* ctx, bool server, const std::string& alpn)
      : ctx_(ctx), server_(server), alpn_wire_(char(alpn.size()) + alpn) {}
  SSL_CTX* const ctx_;
  const bool server_;
  const std::string alpn_wire_;
};

class TlsStream final : public Stream {
 public:
  // Wraps a connected socket (made non-blocking). On a client context the server's certificate
  // must name `peer_host` (a DNS name or an IP address); a server context ignores it. The
  // handshake runs in Handshake (client) or within the first Recv calls (server, under epoll).
  static Result<std::unique_ptr<TlsStream>> Wrap(Fd fd, const TlsContext& ctx,
                                                 std::string_view peer_host);
  ~TlsStream() override;

  // Completes the handshake within `timeout_ms`. Unavailable with the reason (the certificate
  // verification error, a peer that does not speak TLS, the time).
  Status Handshake(int timeout_ms) ARCHIL_EXCLUDES(mu_);

  Result<size_t> Recv(char* buf, size_t n) override ARCHIL_EXCLUDES(mu_);
  bool Buffered() override ARCHIL_EXCLUDES(mu_);
  Status SendAll(std::span<iovec> iov, int timeout_ms) override ARCHIL_EXCLUDES(mu_);

 private:
  TlsStream(Fd fd, SSL* ssl, std::string alpn)
      : Stream(std::move(fd)), ssl_(ssl), alpn_(std::move(alpn)) {}
  // Writes `n` bytes as TLS records, waiting for room until `deadline_ms` (a NowMs time).
  Status Write(const char* p, size_t n, int64_t deadline_ms, int timeout_ms) ARCHIL_EXCLUDES(mu_);

  Mutex mu_;
  SSL* const ssl_ ARCHIL_PT_GUARDED_BY(mu_);
  const std::string alpn_;                    // wire form
  bool more_ ARCHIL_GUARDED_BY(mu_) = false;  // the last Recv left received bytes unread
};

}  // namespace archil::net
