#include "net/tls.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "net/socket.h"

namespace archil::net {
namespace {

// OpenSSL's queued errors, oldest first, as one line; clears the queue.
std::string OpenSslErrors() {
  std::string out;
  while (const unsigned long e = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof buf);
    if (!out.empty()) out += "; ";
    out += buf;
  }
  return out.empty() ? "unknown TLS error" : out;
}

// What a failed OpenSSL call on `ssl` means: 0 to wait for the socket (sets *events to POLLIN
// or POLLOUT), or the failure.
Status Classify(SSL* ssl, int ret, short* events, const char* what) {
  const int err = SSL_get_error(ssl, ret);
  switch (err) {
    case SSL_ERROR_WANT_READ:
      *events = POLLIN;
      return Status::Ok();
    case SSL_ERROR_WANT_WRITE:
      *events = POLLOUT;
      return Status::Ok();
    case SSL_ERROR_ZERO_RETURN:
      return Status::Unavailable("closed by the peer");
    case SSL_ERROR_SYSCALL: {
      const int sys = errno;
      ERR_clear_error();
      if (sys == 0 || sys == ECONNRESET || sys == EPIPE) {
        return Status::Unavailable("closed by the peer");
      }
      return Status::Unavailable(std::string(what) + ": " + ErrorText(sys));
    }
    default:
      return Status::Unavailable(std::string(what) + ": " + OpenSslErrors());
  }
}

SSL_CTX* NewContext(bool server) {
  SSL_CTX* ctx = SSL_CTX_new(server ? TLS_server_method() : TLS_client_method());
  if (ctx == nullptr) return nullptr;
  // Both ends are ours: TLS 1.3 only, no renegotiation, no session tickets (a mount holds one
  // connection for hours; resumption would save nothing and add state).
  SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION);
  SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION);
  SSL_CTX_set_num_tickets(ctx, 0);
  SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
  // A send that waited for room retries from a buffer that may have moved.
  SSL_CTX_set_mode(ctx, SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  // Read whole socket buffers, not one record header then one record: fewer recv calls.
  SSL_CTX_set_read_ahead(ctx, 1);
  return ctx;
}

// OpenSSL's socket BIO writes with write(2), which raises SIGPIPE on a closed connection and
// would kill the process: this one is the socket BIO with send(MSG_NOSIGNAL), so a peer that
// goes away is an error like any other, with no process-wide signal setting.
int NoSignalWrite(BIO* b, const char* data, int n) {
  BIO_clear_retry_flags(b);
  const int r =
      static_cast<int>(::send(BIO_get_fd(b, nullptr), data, static_cast<size_t>(n), MSG_NOSIGNAL));
  if (r <= 0 && BIO_sock_should_retry(r)) BIO_set_retry_write(b);
  return r;
}

int NoSignalRead(BIO* b, char* data, int n) {
  BIO_clear_retry_flags(b);
  const int r = static_cast<int>(::recv(BIO_get_fd(b, nullptr), data, static_cast<size_t>(n), 0));
  if (r <= 0 && BIO_sock_should_retry(r)) BIO_set_retry_read(b);
  if (r == 0) BIO_set_flags(b, BIO_FLAGS_IN_EOF);
  return r;
}

const BIO_METHOD* NoSignalSocket() {
  static const BIO_METHOD* method = [] {
    BIO_METHOD* m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK | BIO_TYPE_DESCRIPTOR,
                                 "archil socket");
    const BIO_METHOD* base = BIO_s_socket();
    BIO_meth_set_write(m, NoSignalWrite);
    BIO_meth_set_read(m, NoSignalRead);
    BIO_meth_set_ctrl(m, BIO_meth_get_ctrl(base));
    BIO_meth_set_create(m, BIO_meth_get_create(base));
    BIO_meth_set_destroy(m, BIO_meth_get_destroy(base));
    return m;
  }();
  return method;
}

bool IsIpAddress(std::string_view host) {
  in6_addr a6;
  in_addr a4;
  const std::string h(host);
  return inet_pton(AF_INET, h.c_str(), &a4) == 1 || inet_pton(AF_INET6, h.c_str(), &a6) == 1;
}

}  // namespace

// The server's ALPN choice: its own protocol if the client offers it, else the handshake fails.
int SelectAlpn(SSL*, const unsigned char** out, unsigned char* outlen, const unsigned char* in,
               unsigned int inlen, void* arg) {
  const std::string& mine = static_cast<const TlsContext*>(arg)->alpn_wire();
  for (unsigned int i = 0; i < inlen; i += 1u + in[i]) {
    if (i + 1u + in[i] <= inlen && in[i] + 1u == mine.size() &&
        std::memcmp(in + i, mine.data(), mine.size()) == 0) {
      *out = in + i + 1;
      *outlen = in[i];
      return SSL_TLSEXT_ERR_OK;
    }
  }
  return SSL_TLSEXT_ERR_ALERT_FATAL;
}

Result<std::shared_ptr<TlsContext>> TlsContext::Server(const std::string& cert_file,
                                                       const std::string& key_file,
                                                       const std::string& alpn) {
  ERR_clear_error();
  SSL_CTX* ctx = NewContext(true);
  if (ctx == nullptr) return Status::Internal("TLS: " + OpenSslErrors());
  std::shared_ptr<TlsContext> c(new TlsContext(ctx, true, alpn));
  SSL_CTX_set_alpn_select_cb(ctx, SelectAlpn, c.get());
  if (SSL_CTX_use_certificate_chain_file(ctx, cert_file.c_str()) != 1) {
    return Status::InvalidArgument("TLS certificate " + cert_file + ": " + OpenSslErrors());
  }
  if (SSL_CTX_use_PrivateKey_file(ctx, key_file.c_str(), SSL_FILETYPE_PEM) != 1) {
    return Status::InvalidArgument("TLS key " + key_file + ": " + OpenSslErrors());
  }
  if (SSL_CTX_check_private_key(ctx) != 1) {
    return Status::InvalidArgument("TLS key " + key_file + " does not match " + cert_file);
  }
  return c;
}

Result<std::shared_ptr<TlsContext>> TlsContext::Client(const std::string& ca_file,
                                                       const std::string& alpn) {
  ERR_clear_error();
  SSL_CTX* ctx = NewContext(false);
  if (ctx == nullptr) return Status::Internal("TLS: " + OpenSslErrors());
  std::shared_ptr<TlsContext> c(new TlsContext(ctx, false, alpn));
  const std::string& wire = c->alpn_wire();
  if (SSL_CTX_set_alpn_protos(ctx, reinterpret_cast<const unsigned char*>(wire.data()),
                              static_cast<unsigned>(wire.size())) != 0) {
    return Status::Internal("TLS: " + OpenSslErrors());
  }
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
  const int loaded = ca_file.empty() ? SSL_CTX_set_default_verify_paths(ctx)
                                     : SSL_CTX_load_verify_locations(ctx, ca_file.c_str(), nullptr);
  if (loaded != 1) {
    return Status::InvalidArgument("TLS CA file " +
                                   (ca_file.empty() ? std::string("(system store)") : ca_file) +
                                   ": " + OpenSslErrors());
  }
  return c;
}

TlsContext::~TlsContext() { SSL_CTX_free(ctx_); }

Result<std::unique_ptr<TlsStream>> TlsStream::Wrap(Fd fd, const TlsContext& ctx,
                                                   std::string_view peer_host) {
  const int flags = ::fcntl(fd.get(), F_GETFL);
  if (flags < 0 || ::fcntl(fd.get(), F_SETFL, flags | O_NONBLOCK) != 0) {
    return Status::Internal("fcntl O_NONBLOCK failed");
  }
  ERR_clear_error();
  SSL* ssl = SSL_new(ctx.get());
  if (ssl == nullptr) return Status::Internal("TLS: " + OpenSslErrors());
  const int raw = fd.get();
  std::unique_ptr<TlsStream> s(new TlsStream(std::move(fd), ssl, ctx.alpn_wire()));
  BIO* bio = BIO_new(NoSignalSocket());
  if (bio == nullptr) return Status::Internal("TLS: " + OpenSslErrors());
  BIO_set_fd(bio, raw, BIO_NOCLOSE);
  SSL_set_bio(ssl, bio, bio);
  if (ctx.server()) {
    SSL_set_accept_state(ssl);
  } else {
    const std::string host(peer_host);
    // SNI carries names only; the certificate check takes a name or an address.
    if (!IsIpAddress(host)) SSL_set_tlsext_host_name(ssl, host.c_str());
    if (SSL_set1_host(ssl, host.c_str()) != 1) {
      return Status::InvalidArgument("TLS: cannot verify a certificate for host " + host);
    }
    SSL_set_connect_state(ssl);
  }
  return s;
}

TlsStream::~TlsStream() {
  MutexLock lock(&mu_);
  SSL_free(ssl_);
}

Status TlsStream::Handshake(int timeout_ms) {
  const int64_t deadline = NowMs() + timeout_ms;
  while (true) {
    short events = 0;
    {
      MutexLock lock(&mu_);
      ERR_clear_error();
      const int r = SSL_do_handshake(ssl_);
      if (r == 1) {
        const unsigned char* chosen = nullptr;
        unsigned int len = 0;
        SSL_get0_alpn_selected(ssl_, &chosen, &len);
        if (len == 0) {
          return Status::Unavailable("TLS: the server did not choose the protocol (ALPN " +
                                     alpn_.substr(1) + "): not a disk server?");
        }
        return Status::Ok();
      }
      Status s = Classify(ssl_, r, &events, "TLS handshake");
      if (!s.ok()) {
        const long verify = SSL_get_verify_result(ssl_);
        if (verify != X509_V_OK) {
          return Status::Unavailable(std::string("TLS: the server's certificate is not trusted: ") +
                                     X509_verify_cert_error_string(verify));
        }
        if (s.message().starts_with("TLS")) return s;
        return Status::Unavailable("TLS handshake: " + s.message() +
                                   " (a server without TLS, or one that refused this client)");
      }
    }
    const int64_t left = deadline - NowMs();
    pollfd p{fd(), events, 0};
    if (left <= 0 || ::poll(&p, 1, static_cast<int>(left)) == 0) {
      return Status::Unavailable("TLS handshake: no answer within " + std::to_string(timeout_ms) +
                                 " ms (does the server speak TLS?)");
    }
  }
}

Result<size_t> TlsStream::Recv(char* buf, size_t n) {
  MutexLock lock(&mu_);
  ERR_clear_error();
  short events = 0;
  if (!SSL_is_init_finished(ssl_)) {
    const int r = SSL_do_handshake(ssl_);
    if (r != 1) {
      ARCHIL_RETURN_IF_ERROR(Classify(ssl_, r, &events, "TLS handshake"));
      return size_t{0};
    }
    // A client that offered no ALPN never reached the selection callback (which refuses one
    // that offers others): the protocol is required both ways.
    const unsigned char* chosen = nullptr;
    unsigned int len = 0;
    SSL_get0_alpn_selected(ssl_, &chosen, &len);
    if (len == 0) {
      return Status::Unavailable("TLS: the client did not ask for the protocol (ALPN " +
                                 alpn_.substr(1) + ")");
    }
  }
  size_t got = 0;
  const int r = SSL_read_ex(ssl_, buf, n, &got);
  // With read-ahead, pending bytes may be only part of a record: they count as more to read
  // only after a read that returned data, so a reader never spins on an incomplete record.
  more_ = r == 1 && SSL_has_pending(ssl_) == 1;
  if (r == 1) return got;
  ARCHIL_RETURN_IF_ERROR(Classify(ssl_, r, &events, "TLS receive"));
  return size_t{0};
}

bool TlsStream::Buffered() {
  MutexLock lock(&mu_);
  return more_;
}

Status TlsStream::SendAll(std::span<iovec> iov, int timeout_ms) {
  const int64_t deadline = NowMs() + timeout_ms;
  size_t total = 0;
  for (const iovec& v : iov) total += v.iov_len;
  // A small frame goes out as one record (one write), as the cleartext stream sends one sendmsg;
  // a large one is written piece by piece, without copying its payload.
  constexpr size_t kCoalesce = 16 << 10;
  if (total <= kCoalesce) {
    char joined[kCoalesce];
    size_t at = 0;
    for (const iovec& v : iov) {
      if (v.iov_len == 0) continue;  // an empty piece may have no buffer at all
      std::memcpy(joined + at, v.iov_base, v.iov_len);
      at += v.iov_len;
    }
    return Write(joined, total, deadline, timeout_ms);
  }
  for (const iovec& v : iov) {
    ARCHIL_RETURN_IF_ERROR(
        Write(static_cast<const char*>(v.iov_base), v.iov_len, deadline, timeout_ms));
  }
  return Status::Ok();
}

Status TlsStream::Write(const char* p, size_t n, int64_t deadline_ms, int timeout_ms) {
  while (n > 0) {
    short events = 0;
    {
      MutexLock lock(&mu_);
      ERR_clear_error();
      size_t written = 0;
      const int r = SSL_write_ex(ssl_, p, n, &written);
      if (r == 1) return Status::Ok();  // without partial writes, all of it
      ARCHIL_RETURN_IF_ERROR(Classify(ssl_, r, &events, "TLS send"));
    }
    const int64_t left = deadline_ms - NowMs();
    pollfd pf{fd(), events, 0};
    if (left <= 0 || ::poll(&pf, 1, static_cast<int>(left)) == 0) {
      return Status::Unavailable("send: the peer did not read for " + std::to_string(timeout_ms) +
                                 " ms");
    }
  }
  return Status::Ok();
}

}  // namespace archil::net
