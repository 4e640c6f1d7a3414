#include "control/http_session.h"

#include <algorithm>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <optional>
#include <string>

#include "base/clock.h"
#include "base/log.h"
#include "control/after_reply.h"

namespace archil {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using Request = http::request<http::string_body>;

std::string_view Sv(beast::string_view v) { return {v.data(), v.size()}; }

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Query strings decode as forms do: %XX escapes, and '+' for a space.
std::string DecodeQueryPart(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '+') {
      out += ' ';
    } else if (s[i] == '%' && i + 2 < s.size() && HexValue(s[i + 1]) >= 0 &&
               HexValue(s[i + 2]) >= 0) {
      out += static_cast<char>(HexValue(s[i + 1]) * 16 + HexValue(s[i + 2]));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// The framing rules Beast does not enforce itself (it already refuses bad chunk sizes and most
// duplicate Content-Lengths): one Content-Length value, never with Transfer-Encoding, and no
// Transfer-Encoding but exactly "chunked". Empty if the head is acceptable.
std::string FramingError(const Request& req) {
  auto lengths = req.equal_range(http::field::content_length);
  std::optional<std::string> length;
  for (auto it = lengths.first; it != lengths.second; ++it) {
    std::string v(Trim(Sv(it->value())));
    if (length && *length != v) return "two different Content-Length headers";
    length = v;
  }
  auto encodings = req.equal_range(http::field::transfer_encoding);
  if (encodings.first == encodings.second) return "";
  if (length) return "Content-Length together with Transfer-Encoding";
  int count = 0;
  for (auto it = encodings.first; it != encodings.second; ++it) {
    if (++count > 1 || Lower(Trim(Sv(it->value()))) != "chunked")
      return "Transfer-Encoding other than chunked";
  }
  return "";
}

ApiResponse ErrorFor(int status, const std::string& detail) {
  switch (status) {
    case 408:
      return ErrorResponse(408, "timeout", "request timeout: the " + detail);
    case 413:
      return ErrorResponse(Status::TooLarge("request body is too large"));
    case 414:
      return ErrorResponse(414, "too_large", "request URI too long");
    case 431:
      return ErrorResponse(431, "too_large", "request headers too large");
    case 503:
      return ErrorResponse(Status::Unavailable("server busy: " + detail));
    default:
      return ErrorResponse(Status::InvalidArgument("malformed HTTP request: " + detail));
  }
}

// The answer to a read that failed: an HTTP status, or 0 to close without one.
int StatusForReadError(const beast::error_code& ec) {
  // A deadline closes the socket (beast::tcp_stream), so a timed-out read gets no answer.
  if (ec == beast::error::timeout) return 0;
  if (ec == http::error::end_of_stream || ec == asio::error::eof ||
      ec == asio::error::connection_reset || ec == asio::error::operation_aborted ||
      ec == asio::ssl::error::stream_truncated)
    return 0;
  if (ec == http::error::body_limit) return 413;
  if (ec == http::error::header_limit) return 431;
  if (ec == http::error::partial_message) return 0;
  if (ec.category() == http::make_error_code(http::error::bad_method).category()) return 400;
  return 0;  // a socket or TLS error: nothing can be written
}

template <class Stream>
class Session : public std::enable_shared_from_this<Session<Stream>> {
 public:
  template <class... Args>
  Session(const SessionConfig* cfg, std::unique_ptr<ConnectionLimits::Slot> slot, Args&&... args)
      : stream_(std::forward<Args>(args)...),
        cfg_(cfg),
        slot_(std::move(slot)),
        budget_(stream_.get_executor()) {}

  void Start() {
    // Until its first request head is read, this connection may be closed to make room.
    // (Checked on the strand: an eviction decided just before the head arrived must not close
    // a connection whose request a handler thread now answers.)
    slot_->OnEvict([weak = this->weak_from_this(), ex = stream_.get_executor()] {
      asio::post(ex, [weak] {
        if (auto self = weak.lock(); self && !self->proven_) self->Close();
      });
    });
    if constexpr (kTls) {
      Deadline(cfg_->handshake_timeout);
      stream_.async_handshake(asio::ssl::stream_base::server,
                              [self = this->shared_from_this()](beast::error_code ec) {
                                if (ec) return self->Close();
                                self->ReadHead();
                              });
    } else {
      ReadHead();
    }
  }

 private:
  static constexpr bool kTls = !std::is_same_v<Stream, beast::tcp_stream>;

  beast::tcp_stream& Tcp() { return beast::get_lowest_layer(stream_); }
  void Deadline(std::chrono::milliseconds d) { Tcp().expires_after(d); }

  // Between requests: the keep-alive budget for the first byte, then the head budget.
  void AwaitNext() {
    if (buffer_.size() > 0) return ReadHead();
    Deadline(cfg_->keep_alive);
    stream_.async_read_some(buffer_.prepare(4096),
                            [self = this->shared_from_this()](beast::error_code ec, size_t n) {
                              if (ec) return self->Close();
                              self->buffer_.commit(n);
                              self->ReadHead();
                            });
  }

  void ReadHead() {
    parser_.emplace();
    parser_->header_limit(static_cast<uint32_t>(cfg_->max_header_bytes));
    parser_->body_limit(cfg_->max_body_bytes);
    StartBudget(cfg_->head_timeout);
    http::async_read_header(
        stream_, buffer_, *parser_,
        [self = this->shared_from_this()](beast::error_code ec, size_t) { self->OnHead(ec); });
  }

  void OnHead(beast::error_code ec) {
    if (ec) return FailRead(ec, "head");
    EndBudget();
    proven_ = true;
    slot_->Proven();
    const Request& req = parser_->get();
    if (std::string why = FramingError(req); !why.empty()) return Fail(400, why);
    if (req.target().size() > cfg_->max_target_bytes) return Fail(414, "");
    if (parser_->is_done()) return Dispatch();
    StartBudget(cfg_->body_timeout);
    if (Lower(Trim(Sv(req[http::field::expect]))) == "100-continue") {
      static const std::string kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
      asio::async_write(stream_, asio::buffer(kContinue),
                        [self = this->shared_from_this()](beast::error_code ec, size_t) {
                          if (ec) return self->FailRead(ec, "body");
                          self->ReadBody();
                        });
      return;
    }
    ReadBody();
  }

  void ReadBody() {
    http::async_read(stream_, buffer_, *parser_,
                     [self = this->shared_from_this()](beast::error_code ec, size_t) {
                       if (ec) return self->FailRead(ec, "body");
                       self->EndBudget();
                       self->Dispatch();
                     });
  }

  void FailRead(beast::error_code ec, const char* what) {
    if (budget_spent_) {
      EndBudget();
      return Fail(408, std::string(what) + " not received within " +
                           std::to_string(budget_ms_.count()) + " ms");
    }
    EndBudget();
    int status = StatusForReadError(ec);
    if (status == 0) return Close();
    Fail(status, std::string(what) + ": " + ec.message());
  }

  // Answers an error the server found itself, then closes.
  void Fail(int status, const std::string& detail) {
    Write(ErrorFor(status, detail), /*keep_alive=*/false, /*head=*/false);
  }

  void Dispatch() {
    Request req = parser_->release();
    parser_.reset();
    ApiRequest api = ToApiRequest(Sv(req.method_string()), Sv(req.target()));
    auto header = [&req](const char* name) {
      auto it = req.find(name);
      return it == req.end() ? std::string() : std::string(Sv(it->value()));
    };
    api.authorization = header("Authorization");
    api.idempotency_key = header("Idempotency-Key");
    api.range = header("Range");
    api.host = header("Host");
    api.scheme = kTls ? "https" : "http";
    beast::error_code peer_ec;
    tcp::endpoint peer = Tcp().socket().remote_endpoint(peer_ec);
    if (!peer_ec) api.peer = peer.address().to_string();
    api.body = std::move(req.body());
    bool keep_alive = req.keep_alive() && ++served_ < cfg_->max_requests;
    bool head = req.method() == http::verb::head;
    cfg_->in_flight->fetch_add(1);
    if (ApiRouter::AnswersInline(api)) {
      // Commits nothing and is bounded: answered here, without waking a handler thread.
      Write(Answer(api), keep_alive, head, /*counted=*/true);
      return;
    }
    // The one hand-off: the handler thread commits and starts the response's write itself.
    // Nothing else touches the stream meanwhile (no read is pending until that write completes,
    // the read's deadline timer was cancelled when the read completed, and a proven connection
    // is never evicted), and the pool's queue orders this thread's use of it after ours.
    auto self = this->shared_from_this();
    bool queued = cfg_->pool->Submit([self, api = std::move(api), keep_alive, head] {
      AfterReplyScope after_reply(self->cfg_->after_reply);
      self->Write(self->Answer(api), keep_alive, head, /*counted=*/true);
      after_reply.Run();
    });
    if (!queued) {
      cfg_->in_flight->fetch_sub(1);
      Fail(503, "too many requests waiting");
    }
  }

  ApiResponse Answer(const ApiRequest& api) const {
    int64_t start = SystemClock::Instance().MonotonicNanos();
    ApiResponse res = cfg_->router->Handle(api);
    ARCHIL_LOG(kDebug) << api.method << " " << LoggablePath(api.path) << " " << res.status << " "
                       << (SystemClock::Instance().MonotonicNanos() - start) / 1000 << " us";
    return res;
  }

  // The status line and the headers of `api`, whole or streamed.
  template <class Message>
  static void SetHead(Message& m, const ApiResponse& api, bool keep_alive) {
    m.version(11);
    m.result(static_cast<unsigned>(api.status));
    m.set(http::field::content_type, api.content_type);
    for (const auto& [name, value] : api.headers) m.set(name, value);
    m.keep_alive(keep_alive);
  }

  void Write(const ApiResponse& api, bool keep_alive, bool head, bool counted = false) {
    if (api.stream && !head) return WriteStream(api, keep_alive, counted);
    res_.emplace();
    SetHead(*res_, api, keep_alive);
    if (head) {
      // The headers of the body, not the body.
      res_->content_length(api.stream ? api.content_length : api.body.size());
    } else {
      res_->body() = api.body;
      res_->prepare_payload();
    }
    Deadline(cfg_->write_timeout);
    http::async_write(
        stream_, *res_,
        [self = this->shared_from_this(), keep_alive, counted](beast::error_code ec, size_t) {
          if (counted) self->cfg_->in_flight->fetch_sub(1);
          self->res_.reset();
          if (ec) return self->Close();
          if (!keep_alive) return self->Linger();
          self->AwaitNext();
        });
  }

  // A streamed body (ApiResponse::stream): the head, then chunks of at most kChunkBytes, each read
  // on the handler pool (the engine may block) and written before the next is read, so at most
  // one chunk per connection is in memory and a slow reader slows the reads. Each write has the
  // write deadline; a failed read or write closes the connection (the client sees a body shorter
  // than its Content-Length).
  static constexpr size_t kChunkBytes = 256 * 1024;

  void WriteStream(const ApiResponse& api, bool keep_alive, bool counted) {
    stream_head_.emplace();
    SetHead(*stream_head_, api, keep_alive);
    stream_head_->content_length(api.content_length);
    stream_serializer_.emplace(*stream_head_);
    body_ = api.stream;
    body_left_ = api.content_length;
    Deadline(cfg_->write_timeout);
    http::async_write_header(
        stream_, *stream_serializer_,
        [self = this->shared_from_this(), keep_alive, counted](beast::error_code ec, size_t) {
          if (ec) return self->EndStream(/*ok=*/false, keep_alive, counted);
          self->ReadChunk(keep_alive, counted);
        });
  }

  void ReadChunk(bool keep_alive, bool counted) {
    if (body_left_ == 0) return EndStream(/*ok=*/true, keep_alive, counted);
    auto self = this->shared_from_this();
    const size_t want = static_cast<size_t>(std::min<uint64_t>(body_left_, kChunkBytes));
    bool queued = cfg_->pool->Submit([self, want, keep_alive, counted] {
      Result<std::string> chunk = self->body_->Next(want);
      asio::post(self->stream_.get_executor(),
                 [self, chunk = std::move(chunk), keep_alive, counted]() mutable {
                   self->WriteChunk(std::move(chunk), keep_alive, counted);
                 });
    });
    if (!queued) {
      ARCHIL_LOG(kWarn) << "a streamed response stops: the handler pool is full";
      EndStream(/*ok=*/false, keep_alive, counted);
    }
  }

  void WriteChunk(Result<std::string> chunk, bool keep_alive, bool counted) {
    if (!chunk.ok() || chunk->empty() || chunk->size() > body_left_) {
      ARCHIL_LOG(kWarn) << "a streamed response stops with " << body_left_ << " bytes unsent: "
                        << (chunk.ok() ? "the body ended early" : chunk.status().ToString());
      return EndStream(/*ok=*/false, keep_alive, counted);
    }
    chunk_ = std::move(*chunk);
    body_left_ -= chunk_.size();
    Deadline(cfg_->write_timeout);
    asio::async_write(
        stream_, asio::buffer(chunk_),
        [self = this->shared_from_this(), keep_alive, counted](beast::error_code ec, size_t) {
          if (ec) return self->EndStream(/*ok=*/false, keep_alive, counted);
          self->ReadChunk(keep_alive, counted);
        });
  }

  void EndStream(bool ok, bool keep_alive, bool counted) {
    if (counted) cfg_->in_flight->fetch_sub(1);
    body_.reset();
    chunk_ = std::string();
    stream_serializer_.reset();
    stream_head_.reset();
    if (!ok) return Close();
    if (!keep_alive) return Linger();
    AwaitNext();
  }

  // After a last response: stop sending, and read (and drop) what the peer still sends for a
  // moment, so that unread input does not make the kernel reset the connection before the peer
  // has read the response.
  void Linger() {
    // No TLS close_notify exchange: the response is complete by its Content-Length.
    beast::error_code ignored;
    Tcp().socket().shutdown(tcp::socket::shutdown_send, ignored);
    Deadline(std::chrono::milliseconds(1000));
    Drain();
  }

  void Drain() {
    Tcp().async_read_some(asio::buffer(drain_),
                          [self = this->shared_from_this()](beast::error_code ec, size_t) {
                            if (ec) return self->Close();
                            self->Drain();
                          });
  }

  void Close() {
    beast::error_code ignored;
    Tcp().socket().shutdown(tcp::socket::shutdown_both, ignored);
    Tcp().close();
  }

  // The time budget of reading one request head, or one body: a total, not an inactivity timer.
  // When it runs out the read is cancelled and the receiving side shut (a read that starts after
  // the cancel, inside a composed read, then ends too), and the request is answered 408.
  void StartBudget(std::chrono::milliseconds budget) {
    Tcp().expires_never();
    budget_spent_ = false;
    budget_ms_ = budget;
    budget_.expires_after(budget);
    budget_.async_wait([self = this->shared_from_this(), phase = ++phase_](beast::error_code ec) {
      if (ec || phase != self->phase_) return;
      self->budget_spent_ = true;
      beast::error_code ignored;
      self->Tcp().socket().cancel(ignored);
      self->Tcp().socket().shutdown(tcp::socket::shutdown_receive, ignored);
    });
  }
  void EndBudget() {
    ++phase_;
    budget_.cancel();
  }

  Stream stream_;
  const SessionConfig* const cfg_;
  std::unique_ptr<ConnectionLimits::Slot> slot_;
  asio::steady_timer budget_;
  std::chrono::milliseconds budget_ms_{0};
  uint64_t phase_ = 0;  // which budget the timer's wait belongs to
  bool budget_spent_ = false;
  bool proven_ = false;  // a whole request head has arrived: never evicted
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::optional<http::response<http::string_body>> res_;
  // A streamed response (WriteStream): its head, the head's serializer, the body's source, what
  // of it is still to send, and the chunk being written.
  std::optional<http::response<http::empty_body>> stream_head_;
  std::optional<http::response_serializer<http::empty_body>> stream_serializer_;
  std::shared_ptr<BodyStream> body_;
  uint64_t body_left_ = 0;
  std::string chunk_;
  size_t served_ = 0;
  char drain_[4096];
};

}  // namespace

ApiRequest ToApiRequest(std::string_view method, std::string_view target) {
  ApiRequest r;
  r.method = std::string(method);
  size_t q = target.find('?');
  r.path = std::string(target.substr(0, q));
  if (q == std::string_view::npos) return r;
  std::string_view query = target.substr(q + 1);
  while (!query.empty()) {
    size_t amp = query.find('&');
    std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    if (pair.empty()) continue;
    size_t eq = pair.find('=');
    std::string_view key = pair.substr(0, eq);
    std::string_view value =
        eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1);
    r.query.emplace(DecodeQueryPart(key), DecodeQueryPart(value));
  }
  return r;
}

void StartSession(tcp::socket socket, asio::ssl::context* tls, const SessionConfig* config,
                  std::unique_ptr<ConnectionLimits::Slot> slot) {
  beast::error_code ignored;
  socket.set_option(tcp::no_delay(true), ignored);
  if (tls != nullptr) {
    std::make_shared<Session<beast::ssl_stream<beast::tcp_stream>>>(config, std::move(slot),
                                                                    std::move(socket), *tls)
        ->Start();
  } else {
    std::make_shared<Session<beast::tcp_stream>>(config, std::move(slot), std::move(socket))
        ->Start();
  }
}

}  // namespace archil
