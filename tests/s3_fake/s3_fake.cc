#include "s3_fake.h"

#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <limits>
#include <list>
#include <map>
#include <mutex>
#include <pugixml.hpp>
#include <random>
#include <set>
#include <thread>

#include "base/strings.h"
#include "s3_fake_util.h"
#include "s3_sigv4_verify.h"
#include "store/sigv4.h"

namespace archil::testing {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;
using namespace s3fake;  // NOLINT(google-build-using-namespace): helpers of this module

constexpr uint64_t kMaxBody = 128ull << 20;
constexpr uint64_t kMinPartSize = 5ull << 20;
constexpr size_t kMaxKeys = 1000;

std::string Sv(beast::string_view v) { return std::string(v.data(), v.size()); }

// An object's bytes as the bodies that brought them: a completed multipart upload keeps its
// parts, since copying 64 MiB into one string (fresh pages, slow to fault in on a VM) cost the
// fake more time than the bandwidth it simulates.
struct StoredObject {
  std::vector<std::string> chunks;
  std::string etag;  // with quotes
  std::time_t modified = 0;

  uint64_t size() const {
    uint64_t n = 0;
    for (const std::string& c : chunks) n += c.size();
    return n;
  }
  // Bytes [off, off + len) (clipped at the end).
  std::string Slice(uint64_t off, uint64_t len) const {
    std::string out;
    for (const std::string& c : chunks) {
      if (len == 0) break;
      if (off >= c.size()) {
        off -= c.size();
        continue;
      }
      const uint64_t n = std::min<uint64_t>(len, c.size() - off);
      out.append(c, off, n);
      len -= n;
      off = 0;
    }
    return out;
  }
  std::string All() const { return Slice(0, size()); }
};

struct Part {
  std::string data;
  std::string md5;     // raw
  std::string etag;    // with quotes
  std::string crc32c;  // its x-amz-checksum-crc32c, if it came with one
};

struct Upload {
  std::string bucket, key;
  std::map<int, Part> parts;
  bool crc32c = false;  // created with x-amz-checksum-algorithm: CRC32C
};

// One answer to a request.
struct Reply {
  int status = 200;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  bool head = false;                    // HEAD: Content-Length of `body`, but no body sent
  std::string content_length_override;  // HEAD of an object: its size
};

}  // namespace

class S3Fake::Impl {
 public:
  explicit Impl(S3FakeOptions o) : opts_(std::move(o)), acceptor_(io_) {
    for (const auto& b : opts_.buckets) buckets_[b];
    enforce_ = opts_.enforce_conditions;
  }

  Status Bind() {
    try {
      boost::system::error_code ec;
      auto addr = asio::ip::make_address(opts_.host, ec);
      if (ec) return Status::InvalidArgument("bad host: " + opts_.host);
      tcp::endpoint ep(addr, opts_.port);
      acceptor_.open(ep.protocol());
      acceptor_.set_option(asio::socket_base::reuse_address(true));
      acceptor_.bind(ep);
      acceptor_.listen(128);
      port_ = acceptor_.local_endpoint().port();
    } catch (const std::exception& e) {
      return Status::Unavailable(std::string("s3 fake: bind: ") + e.what());
    }
    accept_thread_ = std::thread([this] { AcceptLoop(); });
    return Status::Ok();
  }

  ~Impl() {
    {
      std::lock_guard l(fault_mu_);
      stopping_ = true;
    }
    fault_cv_.notify_all();
    ::shutdown(acceptor_.native_handle(), SHUT_RDWR);
    if (accept_thread_.joinable()) accept_thread_.join();
    std::list<Conn> conns;
    {
      std::lock_guard l(conn_mu_);
      for (auto& c : conns_) {
        if (!c.done->load()) ::shutdown(c.fd, SHUT_RDWR);
      }
      conns.swap(conns_);
    }
    for (auto& c : conns) c.thread.join();
    boost::system::error_code ec;
    acceptor_.close(ec);
  }

  uint16_t port() const { return port_; }
  std::string endpoint() const { return "http://" + opts_.host + ":" + std::to_string(port_); }

  // ---- faults ----
  void SetFirstByteLatency(std::chrono::microseconds d) {
    std::lock_guard l(fault_mu_);
    latency_ = d;
  }
  void SetBandwidth(uint64_t bps) {
    std::lock_guard l(fault_mu_);
    bandwidth_ = bps;
    next_free_ = Clock::now();
  }
  void FailNext(int count, int status, std::string code) {
    std::lock_guard l(fault_mu_);
    fail_next_ = count;
    fail_status_ = status;
    fail_code_ = std::move(code);
  }
  void SetErrorRate(double p, int status, std::string code, uint64_t seed) {
    std::lock_guard l(fault_mu_);
    error_rate_ = p;
    rate_status_ = status;
    rate_code_ = std::move(code);
    rng_.seed(seed);
  }
  void SetHang(bool on) {
    {
      std::lock_guard l(fault_mu_);
      hang_ = on;
    }
    fault_cv_.notify_all();
  }
  void TearNext(int count, int after) {
    std::lock_guard l(fault_mu_);
    tear_next_ = count;
    tear_skip_ = after;
  }
  void SetUnreachable(bool on) {
    {
      std::lock_guard l(fault_mu_);
      unreachable_ = on;
    }
    if (on) {
      // A finished connection's descriptor is closed (and may be reused): skip it.
      std::lock_guard l(conn_mu_);
      for (auto& c : conns_) {
        if (!c.done->load()) ::shutdown(c.fd, SHUT_RDWR);
      }
    }
  }
  void RemoveBucket(const std::string& b) {
    std::lock_guard l(mu_);
    buckets_.erase(b);
    for (auto it = uploads_.begin(); it != uploads_.end();) {
      it = it->second.bucket == b ? uploads_.erase(it) : std::next(it);
    }
  }
  void SetEnforceConditions(bool on) {
    std::lock_guard l(mu_);
    enforce_ = on;
  }

  Counters counters() const {
    std::lock_guard l(mu_);
    return counters_;
  }
  std::optional<std::string> Object(const std::string& b, const std::string& k) const {
    std::lock_guard l(mu_);
    auto bi = buckets_.find(b);
    if (bi == buckets_.end()) return std::nullopt;
    auto oi = bi->second.find(k);
    if (oi == bi->second.end()) return std::nullopt;
    return oi->second.All();
  }
  std::vector<std::string> Keys(const std::string& b) const {
    std::lock_guard l(mu_);
    std::vector<std::string> out;
    auto bi = buckets_.find(b);
    if (bi == buckets_.end()) return out;
    for (const auto& [k, v] : bi->second) out.push_back(k);
    return out;
  }
  void PutDirect(const std::string& b, const std::string& k, std::string data) {
    StoredObject o;
    o.etag = "\"" + HexEncode(Md5Raw(data)) + "\"";
    o.chunks.push_back(std::move(data));
    o.modified = std::time(nullptr);
    std::lock_guard l(mu_);
    buckets_[b][k] = std::move(o);
  }

 private:
  struct Conn {
    int fd = -1;
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
  };

  struct Request {
    http::request<http::string_body> msg;
    std::string method;
    std::string raw_path;
    std::string bucket, key;
    std::vector<std::pair<std::string, std::string>> query;
    std::string resource;
    const std::string* Query(std::string_view name) const {
      for (const auto& [k, v] : query) {
        if (k == name) return &v;
      }
      return nullptr;
    }
    std::string Header(std::string_view name) const {
      auto it = msg.find(beast::string_view(name.data(), name.size()));
      return it == msg.end() ? std::string() : Sv(it->value());
    }
  };

  void AcceptLoop() {
    for (;;) {
      boost::system::error_code ec;
      tcp::socket sock(io_);
      acceptor_.accept(sock, ec);
      {
        std::lock_guard l(fault_mu_);
        if (stopping_) return;
      }
      if (ec) {
        if (ec == asio::error::invalid_argument || ec == asio::error::bad_descriptor) return;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        continue;
      }
      if (Unreachable()) {
        sock.close(ec);
        continue;
      }
      // Headers and body go out in separate writes: without this, Nagle holds the body until the
      // client's delayed ACK of the headers (40 ms), which no real store adds.
      sock.set_option(tcp::no_delay(true), ec);
      std::lock_guard l(conn_mu_);
      // Reap finished connections.
      for (auto it = conns_.begin(); it != conns_.end();) {
        if (it->done->load()) {
          it->thread.join();
          it = conns_.erase(it);
        } else {
          ++it;
        }
      }
      Conn c;
      c.fd = sock.native_handle();
      c.done = std::make_shared<std::atomic<bool>>(false);
      c.thread = std::thread([this, s = std::move(sock), done = c.done]() mutable {
        try {
          Serve(s);
        } catch (const std::exception&) {
        }
        boost::system::error_code ignored;
        s.shutdown(tcp::socket::shutdown_both, ignored);
        {
          // Close under the lock so no one shuts down a reused descriptor.
          std::lock_guard l(conn_mu_);
          s.close(ignored);
          done->store(true);
        }
      });
      conns_.push_back(std::move(c));
    }
  }

  bool Unreachable() {
    std::lock_guard l(fault_mu_);
    return unreachable_ || stopping_;
  }

  // Sleeps until `n` body bytes may pass the shared token bucket. False if stopping.
  bool Charge(uint64_t n) {
    std::unique_lock l(fault_mu_);
    if (bandwidth_ == 0 || n == 0) return !stopping_;
    auto now = Clock::now();
    auto start = std::max(now, next_free_);
    next_free_ = start + std::chrono::nanoseconds(n * 1'000'000'000ull / bandwidth_);
    auto until = next_free_;
    fault_cv_.wait_until(l, until, [&] { return stopping_; });
    return !stopping_;
  }

  void Serve(tcp::socket& sock) {
    beast::flat_buffer buf;
    for (;;) {
      if (Unreachable()) return;
      http::request_parser<http::string_body> parser;
      parser.header_limit(64 * 1024);
      parser.body_limit(
          std::numeric_limits<std::uint64_t>::max());  // checked below, so an oversized body gets
                                                       // an answer
      beast::error_code ec;
      http::read_header(sock, buf, parser, ec);
      if (ec) return;
      Request req;
      bool too_large = parser.content_length() && *parser.content_length() > kMaxBody;
      if (too_large) {
        req.msg = parser.release();
        ParseTarget(&req);
        Reply r = Error(req, 400, "EntityTooLarge", "Your proposed upload exceeds the maximum");
        r.headers.emplace_back("Connection", "close");
        Send(sock, req, r);
        return;
      }
      if (parser.chunked()) {
        req.msg = parser.release();
        ParseTarget(&req);
        Reply r = Error(req, 411, "MissingContentLength", "You must provide the Content-Length");
        r.headers.emplace_back("Connection", "close");
        Send(sock, req, r);
        return;
      }
      std::string body;
      if (!ReadBody(sock, buf, parser.content_length().value_or(0), &body)) return;
      req.msg = parser.release();
      req.msg.body() = std::move(body);
      {
        std::lock_guard l(mu_);
        counters_.requests++;
        counters_.bytes_in += req.msg.body().size();
      }
      if (!Hang()) return;
      Reply r = Handle(&req);
      if (!Send(sock, req, r)) return;
      if (!req.msg.keep_alive()) return;
    }
  }

  // Reads a body of `len` bytes: what `buf` holds past the header, then straight from the socket
  // into the body's own storage, unzeroed and in large reads (beast's string_body zero-fills each
  // piece it grows by and reads 64 KiB at a time through `buf`: at 200 MB/s that took a quarter of
  // the fake's time on a 2-core machine). Each piece is charged to the bandwidth as it arrives, so
  // a body takes the link's time while the fake works on what came (charged whole after the read,
  // a body's CPU time and its link time added up instead of overlapping). False if the peer went
  // first or the fake is stopping.
  bool ReadBody(tcp::socket& sock, beast::flat_buffer& buf, uint64_t len, std::string* body) {
    bool whole = true;
    body->resize_and_overwrite(static_cast<size_t>(len), [&](char* out, size_t n) {
      const size_t held = std::min(n, buf.size());
      std::memcpy(out, buf.data().data(), held);
      buf.consume(held);
      size_t got = held;
      whole = Charge(held);
      while (whole && got < n) {
        beast::error_code ec;
        const size_t r = sock.read_some(asio::buffer(out + got, n - got), ec);
        if (ec) {
          whole = false;
          break;
        }
        got += r;
        whole = Charge(r);
      }
      return got;
    });
    return whole;
  }

  // Waits while hanging; false if the connection must close unanswered.
  bool Hang() {
    std::unique_lock l(fault_mu_);
    if (!hang_) return !stopping_;
    fault_cv_.wait(l, [&] { return !hang_ || stopping_; });
    return false;
  }

  bool ParseTarget(Request* req) {
    std::string target = Sv(req->msg.target());
    req->method = Sv(req->msg.method_string());
    size_t q = target.find('?');
    req->raw_path = target.substr(0, q);
    std::string decoded;
    if (!store::UriDecode(req->raw_path, &decoded)) return false;
    req->resource = decoded;
    if (decoded.empty() || decoded[0] != '/') return false;
    size_t slash = decoded.find('/', 1);
    req->bucket = decoded.substr(1, slash == std::string::npos ? std::string::npos : slash - 1);
    if (slash != std::string::npos) req->key = decoded.substr(slash + 1);
    if (q != std::string::npos) {
      std::string_view qs(target);
      qs.remove_prefix(q + 1);
      while (!qs.empty()) {
        size_t amp = qs.find('&');
        std::string_view item = qs.substr(0, amp);
        qs = amp == std::string_view::npos ? std::string_view() : qs.substr(amp + 1);
        if (item.empty()) continue;
        size_t eq = item.find('=');
        std::string k, v;
        if (!store::UriDecode(item.substr(0, eq), &k)) return false;
        if (eq != std::string_view::npos && !store::UriDecode(item.substr(eq + 1), &v)) {
          return false;
        }
        req->query.emplace_back(std::move(k), std::move(v));
      }
    }
    return true;
  }

  Reply Error(const Request& req, int status, std::string_view code, std::string_view message) {
    Reply r;
    r.status = status;
    r.head = req.method == "HEAD";
    r.headers.emplace_back("Content-Type", "application/xml");
    r.body = "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>" + XmlEscape(code) +
             "</Code><Message>" + XmlEscape(message) + "</Message><Resource>" +
             XmlEscape(req.resource) + "</Resource><RequestId>" + NextRequestId() +
             "</RequestId></Error>";
    return r;
  }

  std::string NextRequestId() {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%016llX",
                  static_cast<unsigned long long>(request_ids_.fetch_add(1) + 1));
    return buf;
  }

  Reply Handle(Request* req) {
    bool target_ok = ParseTarget(req);
    // Injected errors first: the request is not applied.
    {
      std::lock_guard l(fault_mu_);
      int status = 0;
      std::string code;
      if (fail_next_ > 0) {
        fail_next_--;
        status = fail_status_;
        code = fail_code_;
      } else if (error_rate_ > 0 &&
                 std::uniform_real_distribution<double>(0, 1)(rng_) < error_rate_) {
        status = rate_status_;
        code = rate_code_;
      }
      if (status != 0) {
        {
          std::lock_guard l2(mu_);
          counters_.injected_errors++;
        }
        return Error(*req, status, code, "injected error");
      }
    }
    if (!target_ok) return Error(*req, 400, "InvalidURI", "Couldn't parse the specified URI.");
    Reply auth = Authenticate(*req);
    if (auth.status != 200) return auth;
    return Dispatch(*req);
  }

  Reply Authenticate(const Request& req) {
    SignedRequest sr{req.method, req.raw_path, req.query, {}, req.msg.body()};
    for (const auto& field : req.msg)
      sr.headers.emplace_back(Sv(field.name_string()), Sv(field.value()));
    std::optional<AuthFailure> f = VerifySigV4(
        sr, SigV4Policy{opts_.access_key, opts_.secret_key, opts_.region, std::time(nullptr)});
    if (!f) return Reply{};
    if (f->bad_signature) BadSignature();
    return Error(req, f->http_status, f->code, f->message);
  }

  void BadSignature() {
    std::lock_guard l(mu_);
    counters_.bad_signatures++;
  }

  // Takes the body of a PUT (stored without a copy: the fake must not be what limits a benchmark).
  Reply Dispatch(Request& req) {
    static const std::set<std::string> kKnown = {
        "uploads",     "uploadId", "partNumber",         "x-id",          "list-type",  "prefix",
        "start-after", "max-keys", "continuation-token", "encoding-type", "fetch-owner"};
    for (const auto& [k, v] : req.query) {
      if (!kKnown.count(k)) return Error(req, 501, "NotImplemented", "unsupported: " + k);
    }
    if (req.bucket.empty()) return Error(req, 501, "NotImplemented", "ListBuckets");
    std::unique_lock l(mu_);
    auto bi = buckets_.find(req.bucket);
    if (bi == buckets_.end()) {
      return Error(req, 404, "NoSuchBucket", "The specified bucket does not exist");
    }
    auto& objects = bi->second;
    const std::string& m = req.method;
    if (req.key.empty()) {
      if (m == "GET" && req.Query("list-type") && *req.Query("list-type") == "2") {
        return List(req, objects);
      }
      if (m == "HEAD") return Reply{200, {}, "", true, ""};
      return Error(req, 501, "NotImplemented", "unsupported bucket operation");
    }
    const std::string* upload_id = req.Query("uploadId");
    if (m == "POST" && req.Query("uploads")) return CreateUpload(req);
    if (m == "PUT" && upload_id) return UploadPart(req, *upload_id);
    if (m == "POST" && upload_id) return Complete(req, *upload_id, objects);
    if (m == "DELETE" && upload_id) {
      auto ui = uploads_.find(*upload_id);
      if (ui == uploads_.end() || ui->second.bucket != req.bucket || ui->second.key != req.key) {
        return Error(req, 404, "NoSuchUpload", "The specified upload does not exist.");
      }
      uploads_.erase(ui);
      counters_.aborts++;
      return Reply{204, {}, "", false, ""};
    }
    if (req.Query("uploads") || req.Query("partNumber") || req.Query("list-type")) {
      return Error(req, 501, "NotImplemented", "unsupported object operation");
    }
    if (m == "PUT") return Put(req, objects);
    if (m == "GET") return Get(req, objects);
    if (m == "HEAD") {
      counters_.heads++;
      auto oi = objects.find(req.key);
      if (oi == objects.end()) return Reply{404, {}, "", true, ""};
      Reply r{200,
              {{"ETag", oi->second.etag}, {"Last-Modified", HttpDate(oi->second.modified)}},
              "",
              true,
              std::to_string(oi->second.size())};
      return r;
    }
    if (m == "DELETE") {
      counters_.deletes++;
      objects.erase(req.key);
      return Reply{204, {}, "", false, ""};
    }
    return Error(req, 501, "NotImplemented", "unsupported method");
  }

  // REQUIRES: mu_ held. Checks If-None-Match / If-Match against `objects[key]`.
  bool ConditionsHold(const Request& req, const std::map<std::string, StoredObject>& objects) {
    if (!enforce_) return true;
    auto oi = objects.find(req.key);
    if (req.msg.find("If-None-Match") != req.msg.end()) {
      std::string v = req.Header("If-None-Match");
      if (v == "*" && oi != objects.end()) return false;
    }
    if (req.msg.find("If-Match") != req.msg.end()) {
      std::string v = req.Header("If-Match");
      if (oi == objects.end()) return false;
      if (v != "*" && Unquote(v) != Unquote(oi->second.etag)) return false;
    }
    return true;
  }

  Reply PreconditionFailed(const Request& req) {
    counters_.precondition_failed++;
    return Error(req, 412, "PreconditionFailed",
                 "At least one of the pre-conditions you specified did not hold");
  }

  // As S3: a body sent with x-amz-checksum-crc32c must have that CRC32C (else 400 BadDigest);
  // counts the checks and the bodies sent as UNSIGNED-PAYLOAD.
  std::optional<Reply> ChecksumFails(const Request& req) {
    if (req.Header("x-amz-content-sha256") == "UNSIGNED-PAYLOAD") counters_.unsigned_payloads++;
    if (req.msg.find("x-amz-checksum-crc32c") == req.msg.end()) return std::nullopt;
    if (req.Header("x-amz-checksum-crc32c") != store::ChecksumCrc32c(req.msg.body())) {
      return Error(req, 400, "BadDigest",
                   "The CRC32C you specified did not match the calculated checksum.");
    }
    counters_.checksums_verified++;
    return std::nullopt;
  }

  Reply Put(Request& req, std::map<std::string, StoredObject>& objects) {
    counters_.puts++;
    if (std::optional<Reply> bad = ChecksumFails(req)) return *bad;
    if (!ConditionsHold(req, objects)) return PreconditionFailed(req);
    StoredObject o;
    o.etag = "\"" + HexEncode(Md5Raw(req.msg.body())) + "\"";
    o.chunks.push_back(std::move(req.msg.body()));
    o.modified = std::time(nullptr);
    Reply r{200, {{"ETag", o.etag}}, "", false, ""};
    objects[req.key] = std::move(o);
    return r;
  }

  Reply Get(const Request& req, std::map<std::string, StoredObject>& objects) {
    counters_.gets++;
    auto oi = objects.find(req.key);
    if (oi == objects.end())
      return Error(req, 404, "NoSuchKey", "The specified key does not exist.");
    const StoredObject& o = oi->second;
    const uint64_t size = o.size();
    Reply r;
    r.headers.emplace_back("ETag", oi->second.etag);
    r.headers.emplace_back("Last-Modified", HttpDate(oi->second.modified));
    std::string range = req.Header("Range");
    if (range.empty()) {
      r.body = o.All();
      return r;
    }
    // bytes=A-B or bytes=A-
    uint64_t a = 0, b = 0;
    bool has_b = false;
    if (range.rfind("bytes=", 0) != 0) return Error(req, 416, "InvalidRange", "bad Range");
    std::string spec = range.substr(6);
    size_t dash = spec.find('-');
    auto digits = [](const std::string& s) {
      return !s.empty() && s.size() < 20 &&
             std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
    };
    if (dash == std::string::npos || !digits(spec.substr(0, dash))) {
      r.body = o.All();  // S3 ignores ranges it does not understand (suffix ranges unsupported)
      return r;
    }
    a = std::stoull(spec.substr(0, dash));
    std::string bs = spec.substr(dash + 1);
    if (!bs.empty()) {
      if (!digits(bs)) return Error(req, 416, "InvalidRange", "bad Range");
      b = std::stoull(bs);
      has_b = true;
      if (b < a) {
        r.body = o.All();
        return r;
      }
    }
    if (a >= size) {
      Reply e = Error(req, 416, "InvalidRange", "The requested range is not satisfiable");
      e.headers.emplace_back("Content-Range", "bytes */" + std::to_string(size));
      return e;
    }
    uint64_t end = has_b ? std::min<uint64_t>(b, size - 1) : size - 1;
    r.status = 206;
    r.body = o.Slice(a, end - a + 1);
    r.headers.emplace_back("Content-Range", "bytes " + std::to_string(a) + "-" +
                                                std::to_string(end) + "/" + std::to_string(size));
    return r;
  }

  Reply List(const Request& req, const std::map<std::string, StoredObject>& objects) {
    counters_.lists++;
    std::string prefix = req.Query("prefix") ? *req.Query("prefix") : "";
    std::string start_after = req.Query("start-after") ? *req.Query("start-after") : "";
    size_t max_keys = kMaxKeys;
    if (const std::string* mk = req.Query("max-keys")) {
      if (mk->empty() || mk->size() > 9 ||
          !std::all_of(mk->begin(), mk->end(), [](char c) { return c >= '0' && c <= '9'; })) {
        return Error(req, 400, "InvalidArgument", "bad max-keys");
      }
      max_keys = std::min<size_t>(std::stoul(*mk), kMaxKeys);
    }
    std::string from = start_after;
    if (const std::string* token = req.Query("continuation-token")) {
      std::string decoded;
      if (token->size() % 2 != 0) {
        return Error(req, 400, "InvalidArgument", "The continuation token provided is incorrect");
      }
      for (size_t i = 0; i < token->size(); i += 2) {
        char* endp = nullptr;
        std::string byte = token->substr(i, 2);
        long v = std::strtol(byte.c_str(), &endp, 16);
        if (endp != byte.c_str() + 2) {
          return Error(req, 400, "InvalidArgument", "The continuation token provided is incorrect");
        }
        decoded.push_back(static_cast<char>(v));
      }
      from = std::max(from, decoded);
    }
    auto it = from.empty() ? objects.begin() : objects.upper_bound(from);
    if (it != objects.end() && it->first < prefix) it = objects.lower_bound(prefix);
    std::string contents;
    size_t count = 0;
    std::string last;
    bool truncated = false;
    for (; it != objects.end(); ++it) {
      if (it->first.compare(0, prefix.size(), prefix) != 0) break;  // past the prefix
      if (count == max_keys) {
        if (max_keys == 0) break;  // nothing listed, so nothing to continue from
        truncated = true;
        break;
      }
      contents += "<Contents><Key>" + XmlEscape(it->first) + "</Key><LastModified>" +
                  IsoTime(it->second.modified) + "</LastModified><ETag>" +
                  XmlEscape(it->second.etag) + "</ETag><Size>" + std::to_string(it->second.size()) +
                  "</Size><StorageClass>STANDARD</StorageClass></Contents>";
      last = it->first;
      count++;
    }
    std::string xml =
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?><ListBucketResult "
        "xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Name>" +
        XmlEscape(req.bucket) + "</Name><Prefix>" + XmlEscape(prefix) + "</Prefix>";
    if (!start_after.empty()) xml += "<StartAfter>" + XmlEscape(start_after) + "</StartAfter>";
    if (const std::string* token = req.Query("continuation-token")) {
      xml += "<ContinuationToken>" + XmlEscape(*token) + "</ContinuationToken>";
    }
    xml += "<KeyCount>" + std::to_string(count) + "</KeyCount><MaxKeys>" +
           std::to_string(max_keys) + "</MaxKeys><IsTruncated>" + (truncated ? "true" : "false") +
           "</IsTruncated>";
    if (truncated) xml += "<NextContinuationToken>" + HexEncode(last) + "</NextContinuationToken>";
    xml += contents + "</ListBucketResult>";
    Reply r;
    r.headers.emplace_back("Content-Type", "application/xml");
    r.body = std::move(xml);
    return r;
  }

  Reply CreateUpload(const Request& req) {
    counters_.multipart_creates++;
    std::string id =
        HexEncode(Md5Raw(req.bucket + "/" + req.key + "/" + std::to_string(++upload_seq_) + "/" +
                         std::to_string(Clock::now().time_since_epoch().count())));
    const bool crc32c = req.msg.find("x-amz-checksum-algorithm") != req.msg.end();
    if (crc32c && req.Header("x-amz-checksum-algorithm") != "CRC32C") {
      return Error(req, 400, "InvalidRequest", "This fake knows only the CRC32C algorithm.");
    }
    uploads_[id] = Upload{req.bucket, req.key, {}, crc32c};
    Reply r;
    r.headers.emplace_back("Content-Type", "application/xml");
    r.body =
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?><InitiateMultipartUploadResult "
        "xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Bucket>" +
        XmlEscape(req.bucket) + "</Bucket><Key>" + XmlEscape(req.key) + "</Key><UploadId>" + id +
        "</UploadId></InitiateMultipartUploadResult>";
    return r;
  }

  Reply UploadPart(Request& req, const std::string& id) {
    counters_.parts++;
    auto ui = uploads_.find(id);
    if (ui == uploads_.end() || ui->second.bucket != req.bucket || ui->second.key != req.key) {
      return Error(req, 404, "NoSuchUpload", "The specified upload does not exist.");
    }
    const std::string* pn = req.Query("partNumber");
    int n = 0;
    if (!pn || pn->empty() || pn->size() > 5 ||
        !std::all_of(pn->begin(), pn->end(), [](char c) { return c >= '0' && c <= '9'; }) ||
        (n = std::stoi(*pn)) < 1 || n > 10000) {
      return Error(req, 400, "InvalidArgument",
                   "Part number must be an integer between 1 and 10000");
    }
    const bool has_crc = req.msg.find("x-amz-checksum-crc32c") != req.msg.end();
    if (has_crc != ui->second.crc32c) {
      return Error(req, 400, "InvalidRequest",
                   std::string("Checksum Type mismatch occurred, expected checksum Type: ") +
                       (ui->second.crc32c ? "crc32c" : "null") +
                       ", actual checksum Type: " + (has_crc ? "crc32c" : "null"));
    }
    if (std::optional<Reply> bad = ChecksumFails(req)) return *bad;
    Part p;
    if (has_crc) p.crc32c = req.Header("x-amz-checksum-crc32c");
    p.data = std::move(req.msg.body());
    p.md5 = Md5Raw(p.data);
    p.etag = "\"" + HexEncode(p.md5) + "\"";
    Reply r{200, {{"ETag", p.etag}}, "", false, ""};
    ui->second.parts[n] = std::move(p);
    return r;
  }

  Reply Complete(const Request& req, const std::string& id,
                 std::map<std::string, StoredObject>& objects) {
    counters_.completes++;
    auto ui = uploads_.find(id);
    if (ui == uploads_.end() || ui->second.bucket != req.bucket || ui->second.key != req.key) {
      return Error(req, 404, "NoSuchUpload", "The specified upload does not exist.");
    }
    pugi::xml_document doc;
    if (!doc.load_buffer(req.msg.body().data(), req.msg.body().size())) {
      return Error(req, 400, "MalformedXML", "The XML you provided was not well-formed");
    }
    pugi::xml_node root = doc.child("CompleteMultipartUpload");
    if (!root) return Error(req, 400, "MalformedXML", "The XML you provided was not well-formed");
    std::vector<std::pair<int, std::string>> listed;
    std::vector<std::string> listed_crcs;
    for (pugi::xml_node part : root.children("Part")) {
      std::string num = part.child_value("PartNumber");
      if (num.empty() || num.size() > 5 ||
          !std::all_of(num.begin(), num.end(), [](char c) { return c >= '0' && c <= '9'; })) {
        return Error(req, 400, "MalformedXML", "bad PartNumber");
      }
      listed.emplace_back(std::stoi(num), part.child_value("ETag"));
      listed_crcs.emplace_back(part.child_value("ChecksumCRC32C"));
    }
    if (listed.empty()) {
      return Error(req, 400, "MalformedXML", "You must specify at least one part");
    }
    auto& parts = ui->second.parts;
    for (size_t i = 0; i < listed.size(); ++i) {
      if (i > 0 && listed[i].first <= listed[i - 1].first) {
        return Error(req, 400, "InvalidPartOrder", "The list of parts was not in ascending order.");
      }
    }
    for (size_t i = 0; i < listed.size(); ++i) {
      const auto& [n, etag] = listed[i];
      auto pi = parts.find(n);
      // An upload created with a checksum algorithm is completed with each part's checksum.
      if (pi == parts.end() || Unquote(etag) != Unquote(pi->second.etag) ||
          (ui->second.crc32c && listed_crcs[i] != pi->second.crc32c)) {
        return Error(req, 400, "InvalidPart",
                     "One or more of the specified parts could not be found.");
      }
    }
    for (size_t i = 0; i + 1 < listed.size(); ++i) {
      if (parts[listed[i].first].data.size() < kMinPartSize) {
        return Error(req, 400, "EntityTooSmall",
                     "Your proposed upload is smaller than the minimum allowed object size.");
      }
    }
    if (!ConditionsHold(req, objects)) return PreconditionFailed(req);
    StoredObject o;
    std::string md5s;
    for (const auto& [n, etag] : listed) {
      o.chunks.push_back(std::move(parts[n].data));
      md5s += parts[n].md5;
    }
    o.etag = "\"" + HexEncode(Md5Raw(md5s)) + "-" + std::to_string(listed.size()) + "\"";
    o.modified = std::time(nullptr);
    std::string etag = o.etag;
    objects[req.key] = std::move(o);
    uploads_.erase(ui);
    Reply r;
    r.headers.emplace_back("Content-Type", "application/xml");
    r.body =
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?><CompleteMultipartUploadResult "
        "xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Location>" +
        XmlEscape(endpoint() + req.raw_path) + "</Location><Bucket>" + XmlEscape(req.bucket) +
        "</Bucket><Key>" + XmlEscape(req.key) + "</Key><ETag>" + XmlEscape(etag) +
        "</ETag></CompleteMultipartUploadResult>";
    return r;
  }

  // Writes `r`, applying latency, tearing and bandwidth. False if the connection must close.
  bool Send(tcp::socket& sock, const Request& req, Reply& r) {
    std::chrono::microseconds latency;
    bool tear = false;
    {
      std::lock_guard l(fault_mu_);
      latency = latency_;
      if (tear_next_ > 0 && tear_skip_ > 0) {
        tear_skip_--;
      } else if (tear_next_ > 0) {
        tear_next_--;
        tear = true;
      }
    }
    if (latency.count() > 0) {
      std::unique_lock l(fault_mu_);
      fault_cv_.wait_for(l, latency, [&] { return stopping_; });
      if (stopping_) return false;
    }
    // A reply with no body to tear is lost whole: the connection closes before its headers.
    if (tear && (r.head || r.status == 204 || r.body.empty())) return false;
    std::string head = "HTTP/1.1 " + std::to_string(r.status) + " " +
                       Sv(http::obsolete_reason(static_cast<http::status>(r.status))) + "\r\n";
    head += "x-amz-request-id: " + NextRequestId() + "\r\n";
    head += "Server: archil-s3-fake\r\n";
    for (const auto& [k, v] : r.headers) head += k + ": " + v + "\r\n";
    if (r.status != 204) {
      std::string len = !r.content_length_override.empty() ? r.content_length_override
                                                           : std::to_string(r.body.size());
      head += "Content-Length: " + len + "\r\n";
    }
    if (!req.msg.keep_alive()) head += "Connection: close\r\n";
    head += "\r\n";
    boost::system::error_code ec;
    asio::write(sock, asio::buffer(head), ec);
    if (ec) return false;
    std::string_view body = r.head || r.status == 204 ? std::string_view() : r.body;
    if (tear) body = body.substr(0, body.size() / 2);
    constexpr size_t kChunk = 64 * 1024;
    for (size_t off = 0; off < body.size(); off += kChunk) {
      size_t n = std::min(kChunk, body.size() - off);
      if (!Charge(n)) return false;
      asio::write(sock, asio::buffer(body.data() + off, n), ec);
      if (ec) return false;
      std::lock_guard l(mu_);
      counters_.bytes_out += n;
    }
    return !tear;
  }

  const S3FakeOptions opts_;
  asio::io_context io_;
  tcp::acceptor acceptor_;
  uint16_t port_ = 0;
  std::thread accept_thread_;
  std::atomic<uint64_t> request_ids_{0};

  std::mutex conn_mu_;
  std::list<Conn> conns_;  // guarded by conn_mu_

  // Faults, guarded by fault_mu_.
  std::mutex fault_mu_;
  std::condition_variable fault_cv_;
  bool stopping_ = false;
  std::chrono::microseconds latency_{0};
  uint64_t bandwidth_ = 0;
  Clock::time_point next_free_ = Clock::now();
  int fail_next_ = 0, fail_status_ = 0;
  std::string fail_code_;
  double error_rate_ = 0;
  int rate_status_ = 0;
  std::string rate_code_;
  std::mt19937_64 rng_;
  bool hang_ = false;
  int tear_next_ = 0;
  int tear_skip_ = 0;
  bool unreachable_ = false;

  // Objects, uploads and counters, guarded by mu_.
  mutable std::mutex mu_;
  std::map<std::string, std::map<std::string, StoredObject>> buckets_;
  std::map<std::string, Upload> uploads_;
  uint64_t upload_seq_ = 0;
  bool enforce_ = true;
  Counters counters_;
};

Result<std::unique_ptr<S3Fake>> S3Fake::Start(S3FakeOptions options) {
  auto impl = std::make_unique<Impl>(std::move(options));
  ARCHIL_RETURN_IF_ERROR(impl->Bind());
  return std::unique_ptr<S3Fake>(new S3Fake(std::move(impl)));
}

S3Fake::S3Fake(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
S3Fake::~S3Fake() = default;
uint16_t S3Fake::port() const { return impl_->port(); }
std::string S3Fake::endpoint() const { return impl_->endpoint(); }
void S3Fake::SetFirstByteLatency(std::chrono::microseconds d) { impl_->SetFirstByteLatency(d); }
void S3Fake::SetBandwidth(uint64_t bps) { impl_->SetBandwidth(bps); }
void S3Fake::FailNext(int count, int status, std::string code) {
  impl_->FailNext(count, status, std::move(code));
}
void S3Fake::SetErrorRate(double p, int status, std::string code, uint64_t seed) {
  impl_->SetErrorRate(p, status, std::move(code), seed);
}
void S3Fake::SetHang(bool on) { impl_->SetHang(on); }
void S3Fake::TearNext(int count, int after) { impl_->TearNext(count, after); }
void S3Fake::SetUnreachable(bool on) { impl_->SetUnreachable(on); }
void S3Fake::RemoveBucket(const std::string& b) { impl_->RemoveBucket(b); }
void S3Fake::SetEnforceConditions(bool on) { impl_->SetEnforceConditions(on); }
S3Fake::Counters S3Fake::counters() const { return impl_->counters(); }
std::optional<std::string> S3Fake::Object(const std::string& b, const std::string& k) const {
  return impl_->Object(b, k);
}
std::vector<std::string> S3Fake::Keys(const std::string& b) const { return impl_->Keys(b); }
void S3Fake::PutDirect(const std::string& b, const std::string& k, std::string data) {
  impl_->PutDirect(b, k, std::move(data));
}

}  // namespace archil::testing
