#include "http/http_client.h"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <system_error>

#include "base/strings.h"

namespace archil {
namespace {

constexpr size_t kMaxHeaderBytes = 64 * 1024;

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return out;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

std::string OpenSslError() {
  unsigned long e = ERR_get_error();
  if (e == 0) return "TLS error";
  char buf[256];
  ERR_error_string_n(e, buf, sizeof(buf));
  return buf;
}

}  // namespace

// A connected socket, optionally wrapped in TLS. Closes on destruction.
class HttpSession::Connection {
 public:
  ~Connection() {
    if (ssl_) {
      SSL_shutdown(ssl_);
      SSL_free(ssl_);
    }
    if (ctx_) SSL_CTX_free(ctx_);
    if (fd_ >= 0) close(fd_);
  }

  Status Connect(const Url& url, const HttpClientOptions& o) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* res = nullptr;
    std::string where = url.host + ":" + url.port;
    int rc = getaddrinfo(url.host.c_str(), url.port.c_str(), &hints, &res);
    if (rc != 0) return Status::Unavailable("cannot resolve " + url.host + ": " + gai_strerror(rc));
    std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> guard(res, freeaddrinfo);
    int err = 0;
    for (addrinfo* ai = res; ai != nullptr; ai = ai->ai_next) {
      fd_ = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
      if (fd_ < 0) {
        err = errno;
        continue;
      }
      timeval tv{o.timeout_ms / 1000, (o.timeout_ms % 1000) * 1000};
      setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));  // also bounds connect()
      setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
      int one = 1;
      setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      if (connect(fd_, ai->ai_addr, ai->ai_addrlen) == 0) break;
      err = errno;
      close(fd_);
      fd_ = -1;
    }
    if (fd_ < 0) {
      return Status::Unavailable("cannot connect to " + where + ": " +
                                 std::generic_category().message(err));
    }
    return url.tls ? StartTls(url, o) : Status::Ok();
  }

  Status SendAll(std::string_view data) {
    while (!data.empty()) {
      ssize_t n;
      if (ssl_) {
        n = SSL_write(ssl_, data.data(), static_cast<int>(data.size()));
        if (n <= 0) return Status::Unavailable("TLS write failed: " + OpenSslError());
      } else {
        n = send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
          return Status::Unavailable("send failed: " + std::generic_category().message(errno));
        }
      }
      data.remove_prefix(static_cast<size_t>(n));
    }
    return Status::Ok();
  }

  // Whether the server has sent something, or closed, while no request was outstanding: then this
  // connection cannot carry another request.
  bool Stale() const {
    pollfd p{fd_, POLLIN, 0};
    return poll(&p, 1, 0) != 0 || (ssl_ && SSL_pending(ssl_) > 0);
  }
  // Whether the last response was read to the end of the stream (no length told where it ends).
  bool ended() const { return ended_; }

  // Reads until the peer closes, or the response is known complete, or `max` bytes.
  Result<std::string> ReadResponse(size_t max) {
    ended_ = false;
    std::string buf;
    size_t expected = 0;  // 0: headers not complete yet; SIZE_MAX: read until the server closes
    char chunk[16384];
    for (;;) {
      ssize_t n;
      if (ssl_) {
        n = SSL_read(ssl_, chunk, sizeof(chunk));
        if (n <= 0) {
          int e = SSL_get_error(ssl_, static_cast<int>(n));
          if (e == SSL_ERROR_ZERO_RETURN || (e == SSL_ERROR_SYSCALL && errno == 0)) {
            ended_ = true;
            break;
          }
          return Status::Unavailable("TLS read failed: " + OpenSslError());
        }
      } else {
        n = recv(fd_, chunk, sizeof(chunk), 0);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
          if (errno == EAGAIN || errno == EWOULDBLOCK) {
            return Status::Unavailable("timed out waiting for the server's answer");
          }
          return Status::Unavailable(std::string("receive failed: ") +
                                     std::generic_category().message(errno));
        }
        if (n == 0) {
          ended_ = true;
          break;
        }
      }
      buf.append(chunk, static_cast<size_t>(n));
      if (buf.size() > max) return Status::TooLarge("server answer larger than the client limit");
      if (expected == 0) {
        expected = ExpectedResponseSize(buf);
        if (expected == 0 && buf.size() > kMaxHeaderBytes) {
          return Status::Corruption("server answer has no end of headers in its first 64 KiB");
        }
      }
      if (expected != 0 && buf.size() >= expected) break;
      // A chunked body ends with its last, empty chunk (and no trailer: this client asks none).
      if (expected == SIZE_MAX && buf.size() >= 5 &&
          buf.compare(buf.size() - 5, 5, "0\r\n\r\n") == 0 && ParseHttpResponse(buf).ok()) {
        break;
      }
    }
    return buf;
  }

 private:
  Status StartTls(const Url& url, const HttpClientOptions& o) {
    // The system's openssl.cnf is not read: parsing it and loading what it names costs this
    // short-lived process ~3 ms a connection (Archil's published latency script times `archil
    // branches create` with its TLS connection). Its one policy that matters, Debian's security
    // level 2, is set below.
    OPENSSL_init_ssl(OPENSSL_INIT_NO_LOAD_CONFIG, nullptr);
    ctx_ = SSL_CTX_new(TLS_client_method());
    if (!ctx_) return Status::Internal("TLS init: " + OpenSslError());
    SSL_CTX_set_min_proto_version(ctx_, TLS1_2_VERSION);
    SSL_CTX_set_security_level(ctx_, 2);
    SSL_CTX_set_verify(ctx_, SSL_VERIFY_PEER, nullptr);
    int loaded = o.ca_file.empty()
                     ? SSL_CTX_set_default_verify_paths(ctx_)
                     : SSL_CTX_load_verify_locations(ctx_, o.ca_file.c_str(), nullptr);
    if (loaded != 1) {
      return Status::InvalidArgument("cannot load CA certificates" +
                                     (o.ca_file.empty() ? std::string() : " from " + o.ca_file) +
                                     ": " + OpenSslError());
    }
    ssl_ = SSL_new(ctx_);
    SSL_set_fd(ssl_, fd_);
    SSL_set_tlsext_host_name(ssl_, url.host.c_str());
    SSL_set1_host(ssl_, url.host.c_str());
    if (SSL_connect(ssl_) != 1) {
      long verify = SSL_get_verify_result(ssl_);
      std::string why =
          verify != X509_V_OK ? X509_verify_cert_error_string(verify) : OpenSslError();
      return Status::Unavailable("TLS handshake with " + url.host + ":" + url.port + " failed: " +
                                 why + " (for a self-signed server, set ARCHIL_CA_FILE)");
    }
    return Status::Ok();
  }

  int fd_ = -1;
  SSL_CTX* ctx_ = nullptr;
  SSL* ssl_ = nullptr;
  bool ended_ = false;
};

namespace {

Result<std::string> DecodeChunked(std::string_view in) {
  std::string out;
  for (;;) {
    size_t eol = in.find("\r\n");
    if (eol == std::string_view::npos) return Status::Corruption("truncated chunked body");
    std::string_view size_line = in.substr(0, eol);
    size_t semi = size_line.find(';');
    if (semi != std::string_view::npos) size_line = size_line.substr(0, semi);
    size_line = Trim(size_line);
    if (size_line.empty() || size_line.size() > 8) return Status::Corruption("bad chunk size");
    size_t size = 0;
    for (char c : size_line) {
      int d = (c >= '0' && c <= '9')   ? c - '0'
              : (c >= 'a' && c <= 'f') ? c - 'a' + 10
              : (c >= 'A' && c <= 'F') ? c - 'A' + 10
                                       : -1;
      if (d < 0) return Status::Corruption("bad chunk size");
      size = size * 16 + static_cast<size_t>(d);
    }
    in.remove_prefix(eol + 2);
    if (size == 0) return out;
    if (in.size() < size + 2 || in.substr(size, 2) != "\r\n") {
      return Status::Corruption("truncated chunked body");
    }
    out.append(in.substr(0, size));
    in.remove_prefix(size + 2);
  }
}

}  // namespace

Result<Url> ParseUrl(std::string_view s) {
  Url url;
  if (s.rfind("http://", 0) == 0) {
    s.remove_prefix(7);
    url.port = "80";
  } else if (s.rfind("https://", 0) == 0) {
    s.remove_prefix(8);
    url.tls = true;
    url.port = "443";
  } else {
    return Status::InvalidArgument("URL must start with http:// or https://");
  }
  size_t slash = s.find('/');
  std::string_view authority = s.substr(0, slash);
  if (slash != std::string_view::npos) {
    url.base_path = std::string(s.substr(slash));
    while (!url.base_path.empty() && url.base_path.back() == '/') url.base_path.pop_back();
  }
  std::string_view port;
  if (!authority.empty() && authority[0] == '[') {
    size_t close = authority.find(']');
    if (close == std::string_view::npos) return Status::InvalidArgument("unclosed [ in URL host");
    url.host = std::string(authority.substr(1, close - 1));
    std::string_view rest = authority.substr(close + 1);
    if (!rest.empty()) {
      if (rest[0] != ':') return Status::InvalidArgument("junk after ] in URL host");
      port = rest.substr(1);
    }
  } else {
    size_t colon = authority.find(':');
    url.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) port = authority.substr(colon + 1);
  }
  if (url.host.empty()) return Status::InvalidArgument("URL has no host");
  if (!port.empty()) {
    std::optional<uint64_t> p = ParseUint64(port);
    if (!p || *p == 0 || *p > 65535) return Status::InvalidArgument("URL port must be 1 to 65535");
    url.port = std::string(port);
  }
  return url;
}

namespace {

// The status line and headers of a response; `head` ends before the blank line.
struct Head {
  HttpResponse response;  // status and headers; no body
  bool chunked = false;
  std::optional<uint64_t> length;
};

Result<Head> ParseHead(std::string_view head) {
  size_t eol = head.find("\r\n");
  std::string_view status_line = head.substr(0, eol);
  if (status_line.size() < 12 || status_line.substr(0, 7) != "HTTP/1." || status_line[8] != ' ') {
    return Status::Corruption("malformed HTTP status line");
  }
  std::optional<uint64_t> code = ParseUint64(status_line.substr(9, 3));
  if (!code || *code < 100 || *code > 599) return Status::Corruption("malformed HTTP status code");
  Head h;
  h.response.status = static_cast<int>(*code);
  std::string_view rest = eol == std::string_view::npos ? "" : head.substr(eol + 2);
  while (!rest.empty()) {
    size_t e = rest.find("\r\n");
    std::string_view line = rest.substr(0, e);
    rest = e == std::string_view::npos ? "" : rest.substr(e + 2);
    size_t colon = line.find(':');
    if (colon == std::string_view::npos || colon == 0) {
      return Status::Corruption("malformed HTTP header");
    }
    std::string name = Lower(line.substr(0, colon));
    std::string value(Trim(line.substr(colon + 1)));
    if (name == "content-length") {
      h.length = ParseUint64(value);
      if (!h.length) return Status::Corruption("malformed Content-Length");
    } else if (name == "transfer-encoding" && Lower(value).find("chunked") != std::string::npos) {
      h.chunked = true;
    }
    h.response.headers.emplace_back(std::move(name), std::move(value));
  }
  return h;
}

}  // namespace

size_t ExpectedResponseSize(std::string_view received) {
  size_t end = received.find("\r\n\r\n");
  if (end == std::string_view::npos) return 0;
  Result<Head> h = ParseHead(received.substr(0, end));
  if (!h.ok() || h->chunked || !h->length || *h->length > SIZE_MAX - end - 4) return SIZE_MAX;
  return end + 4 + static_cast<size_t>(*h->length);
}

Result<HttpResponse> ParseHttpResponse(std::string_view raw) {
  size_t head_end = raw.find("\r\n\r\n");
  if (head_end == std::string_view::npos) {
    return Status::Corruption("malformed HTTP response: no end of headers");
  }
  ARCHIL_ASSIGN_OR_RETURN(Head h, ParseHead(raw.substr(0, head_end)));
  std::string_view body = raw.substr(head_end + 4);
  HttpResponse r = std::move(h.response);
  if (h.chunked) {
    ARCHIL_ASSIGN_OR_RETURN(r.body, DecodeChunked(body));
  } else if (h.length) {
    if (body.size() < *h.length) return Status::Corruption("truncated HTTP response body");
    r.body = std::string(body.substr(0, *h.length));
  } else {
    r.body = std::string(body);
  }
  return r;
}

Result<HttpResponse> SendHttpRequest(const Url& url, const HttpRequest& req,
                                     const HttpClientOptions& o) {
  HttpSession session(url, o);
  return session.Send(req);
}

HttpSession::HttpSession(Url url, HttpClientOptions options)
    : url_(std::move(url)), options_(std::move(options)) {}

HttpSession::~HttpSession() = default;

Result<HttpResponse> HttpSession::Send(const HttpRequest& req) {
  std::string host = url_.host.find(':') != std::string::npos ? "[" + url_.host + "]" : url_.host;
  std::string msg = req.method + " " + url_.base_path + req.target + " HTTP/1.1\r\nHost: " + host +
                    ":" + url_.port + "\r\nAccept: application/json\r\n";
  for (const auto& [k, v] : req.headers) msg += k + ": " + v + "\r\n";
  if (!req.body.empty() || req.method == "POST" || req.method == "PUT") {
    msg += "Content-Length: " + std::to_string(req.body.size()) + "\r\n";
  }
  msg += "\r\n";
  msg += req.body;
  const bool idempotent = req.method != "POST" && req.method != "PATCH";
  for (int attempt = 0;; ++attempt) {
    if (conn_ && conn_->Stale()) conn_.reset();  // the server ended its keep-alive
    const bool reused = conn_ != nullptr;
    if (!conn_) {
      auto fresh = std::make_unique<Connection>();
      ARCHIL_RETURN_IF_ERROR(fresh->Connect(url_, options_));
      conn_ = std::move(fresh);
      ++connections_;
    }
    Status sent = conn_->SendAll(msg);
    Result<std::string> raw =
        sent.ok() ? conn_->ReadResponse(options_.max_response_bytes) : Result<std::string>(sent);
    const bool nothing = !raw.ok() || raw->empty();
    if (nothing && reused && idempotent && attempt == 0) {
      conn_.reset();  // closed under us between the check and the request: once more, fresh
      continue;
    }
    if (!raw.ok()) {
      conn_.reset();
      return raw.status();
    }
    if (raw->empty()) {
      conn_.reset();
      return Status::Unavailable("the server closed the connection without answering");
    }
    Result<HttpResponse> r = ParseHttpResponse(*raw);
    bool close = !r.ok() || conn_->ended();
    if (r.ok()) {
      for (const auto& [k, v] : r->headers) {
        if (k == "connection" && Lower(v).find("close") != std::string::npos) close = true;
      }
    }
    if (close) conn_.reset();
    return r;
  }
}

std::string UrlEncode(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
        c == '_' || c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

}  // namespace archil
