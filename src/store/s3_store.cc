#include "store/s3_store.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <openssl/md5.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <mutex>
#include <thread>

#include "base/log.h"
#include "base/random.h"
#include "base/strings.h"
#include "base/thread_name.h"
#include "store/s3_xml.h"

namespace archil::store {
namespace {

// The Status for a reply that is not a success. `what` names the request.
Status FromReply(const HttpResponse& r, const std::string& what, Condition condition) {
  const S3Error e = ParseS3Error(r.body);
  const std::string detail = what + ": HTTP " + std::to_string(r.status) +
                             (e.code.empty() ? "" : " " + e.code) +
                             (e.message.empty() ? "" : ": " + e.message);
  if (e.code == "NoSuchBucket") return Status::NotFound(detail);
  switch (r.status) {
    case 404:
      return Status::NotFound(detail);
    case 401:
    case 403:
      return Status::PermissionDenied(detail);
    case 412:
      return condition == Condition::kIfMatch ? Status::FailedPrecondition(detail)
                                              : Status::AlreadyExists(detail);
    default:
      break;
  }
  if (IsRetryableReply(r.status, e.code) || r.status >= 500) return Status::Unavailable(detail);
  return Status::Internal(detail + " (a request this client should not have sent)");
}

bool Success(int status) { return status >= 200 && status < 300; }

constexpr char kChecksumHeader[] = "x-amz-checksum-crc32c";

// The raw MD5 of the pieces, one after the other.
std::string Md5(std::initializer_list<std::string_view> pieces) {
  std::string out(MD5_DIGEST_LENGTH, '\0');
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  EVP_DigestInit_ex(ctx, EVP_md5(), nullptr);
  for (std::string_view p : pieces) EVP_DigestUpdate(ctx, p.data(), p.size());
  EVP_DigestFinal_ex(ctx, reinterpret_cast<unsigned char*>(out.data()), nullptr);
  EVP_MD_CTX_free(ctx);
  return out;
}

// S3's ETag of a multipart object: the MD5 of the parts' raw MD5s, then "-" and the part count.
// Empty if a part's ETag is not an MD5 in hex (another store's).
std::string MultipartEtag(const std::vector<CompletedPart>& parts) {
  std::string md5s;
  for (const CompletedPart& part : parts) {
    const std::string& hex = part.etag;
    if (hex.size() != 2 * MD5_DIGEST_LENGTH) return "";
    for (size_t i = 0; i < hex.size(); i += 2) {
      const std::optional<uint64_t> byte = ParseLowerHex(std::string_view(hex).substr(i, 2), 2);
      if (!byte) return "";
      md5s.push_back(static_cast<char>(*byte));
    }
  }
  return HexEncode(Md5({md5s})) + "-" + std::to_string(parts.size());
}

// Parses "scheme://host[:port]" (no path); false if it is not that.
bool SplitEndpoint(const std::string& endpoint, std::string* scheme, std::string* host) {
  const size_t sep = endpoint.find("://");
  if (sep == std::string::npos) return false;
  *scheme = endpoint.substr(0, sep);
  *host = endpoint.substr(sep + 3);
  return (*scheme == "http" || *scheme == "https") && !host->empty() &&
         host->find('/') == std::string::npos;
}

Status ReadRange(int fd, uint64_t offset, size_t n, std::string* out) {
  out->resize(n);
  size_t done = 0;
  while (done < n) {
    ssize_t r = pread(fd, out->data() + done, n - done, static_cast<off_t>(offset + done));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return Status::FromErrno(errno, "read for upload");
    if (r == 0) return Status::IoError("read for upload: the file is shorter than its size");
    done += static_cast<size_t>(r);
  }
  return Status::Ok();
}

}  // namespace

S3Store::S3Store(S3Config config) : config_(std::move(config)), transport_(config_.transport) {
  SplitEndpoint(config_.endpoint, &scheme_, &host_);
  if (config_.virtual_hosted) host_ = config_.bucket + "." + host_;
  unsigned_payload_ = config_.payload == S3Config::Payload::kUnsigned ||
                      (config_.payload == S3Config::Payload::kAuto && scheme_ == "https");
  uint64_t seed = 0;
  (void)SecureRandomBytes(&seed, sizeof(seed));
  seed_ = seed;
}

Result<std::unique_ptr<S3Store>> S3Store::Open(S3Config config) {
  std::string scheme, host;
  if (!SplitEndpoint(config.endpoint, &scheme, &host)) {
    return Status::InvalidArgument("S3 endpoint '" + config.endpoint +
                                   "' is not http(s)://HOST[:PORT]");
  }
  if (config.part_size < (5ull << 20)) {
    return Status::InvalidArgument("S3 part size is below S3's 5 MiB minimum");
  }
  if (config.upload_threads < 1) config.upload_threads = 1;
  std::unique_ptr<S3Store> store(new S3Store(std::move(config)));
  if (store->config_.probe) ARCHIL_RETURN_IF_ERROR(store->Probe());
  return store;
}

std::string S3Store::Describe() const {
  return "s3://" + config_.bucket + "/" + config_.prefix + " at " + config_.endpoint + " (" +
         config_.region + ")";
}

HttpRequest S3Store::Build(const Call& call) {
  HttpRequest req;
  req.method = call.method;
  req.body = call.body;
  // Path style: /bucket for the bucket, /bucket/key for an object.
  std::string path = config_.virtual_hosted ? "" : "/" + config_.bucket;
  if (!call.key.empty()) path += "/" + UriEncode(config_.prefix + call.key, false);
  if (path.empty()) path = "/";
  std::string query;
  for (const auto& [k, v] : call.query) {
    query += query.empty() ? "?" : "&";
    query += UriEncode(k, true);
    if (!v.empty()) query += "=" + UriEncode(v, true);
  }
  req.url = scheme_ + "://" + host_ + path + query;

  SigningInput in;
  in.method = call.method;
  in.canonical_path = path;
  in.query = call.query;
  in.headers = call.headers;
  if (call.body.empty()) {
    in.payload_hash = std::string(kEmptySha256);
  } else if (unsigned_payload_ && call.method == "PUT") {
    in.payload_hash = "UNSIGNED-PAYLOAD";
    const bool given = std::any_of(in.headers.begin(), in.headers.end(),
                                   [](const auto& h) { return h.first == kChecksumHeader; });
    if (!given) in.headers.emplace_back(kChecksumHeader, ChecksumCrc32c(call.body));
  } else {
    in.payload_hash = Sha256Hex(call.body);
  }
  const std::string date = AmzDate(std::time(nullptr));
  in.headers.emplace_back("host", host_);
  in.headers.emplace_back("x-amz-date", date);
  in.headers.emplace_back("x-amz-content-sha256", in.payload_hash);
  if (!config_.credentials.session_token.empty()) {
    in.headers.emplace_back("x-amz-security-token", config_.credentials.session_token);
  }
  const Signature sig = Sign(in, config_.credentials, date, config_.region, "s3");
  req.headers = std::move(in.headers);
  req.headers.emplace_back("Authorization", sig.authorization);
  return req;
}

Result<HttpResponse> S3Store::Send(const Call& call, SendInfo* info) {
  const auto start = std::chrono::steady_clock::now();
  Backoff backoff(config_.retry, seed_.fetch_add(0x9E3779B97F4A7C15ull));
  SendInfo local;
  if (info == nullptr) info = &local;
  for (int attempt = 1;; ++attempt) {
    requests_.fetch_add(1);
    info->attempts = attempt;
    Result<HttpResponse> r = transport_.Perform(Build(call));
    if (!r.ok()) ++info->abandoned;
    bool retry = !r.ok();
    if (r.ok()) retry = IsRetryableReply(r->status, ParseS3Error(r->body).code);
    if (!retry) return r;
    const std::chrono::milliseconds sleep = backoff.Next(attempt, start);
    if (sleep.count() < 0) {
      if (r.ok()) return r;  // the caller turns the last 5xx into kUnavailable
      return Status::Unavailable(r.status().message() + " (after " + std::to_string(attempt) +
                                 " attempts)");
    }
    retries_.fetch_add(1);
    std::this_thread::sleep_for(sleep);
  }
}

Result<std::string> S3Store::Put(std::string_view key, std::string_view data,
                                 const PutOptions& options) {
  ARCHIL_RETURN_IF_ERROR(ValidateKey(key));
  Call call{"PUT", std::string(key), {}, {}, data};
  if (options.condition == Condition::kIfAbsent) call.headers.emplace_back("if-none-match", "*");
  if (options.condition == Condition::kIfMatch) {
    call.headers.emplace_back("if-match", "\"" + options.etag + "\"");
  }
  constexpr int kRounds = 3;
  for (int round = 1;; ++round) {
    SendInfo info;
    ARCHIL_ASSIGN_OR_RETURN(HttpResponse r, Send(call, &info));
    std::string etag;
    if (r.status == 412 && info.attempts > 1 && options.condition != Condition::kNone) {
      std::string mine = HexEncode(Md5({data}));
      if (LandedEarlier(std::string(key), mine)) etag = std::move(mine);
    }
    if (etag.empty()) {
      if (!Success(r.status)) return FromReply(r, "PUT " + std::string(key), options.condition);
      etag = UnquoteEtag(r.Header("etag"));
    }
    if (info.abandoned == 0) return etag;
    ARCHIL_ASSIGN_OR_RETURN(bool kept, KeptAfterSettle(std::string(key), data.size(), etag));
    if (kept) return etag;
    if (round == kRounds) {
      return Status::Unavailable("PUT " + std::string(key) + ": replaced " +
                                 std::to_string(kRounds) +
                                 " times by attempts abandoned without a reply");
    }
    ARCHIL_LOG(kWarn) << "object store: " << key
                      << " was replaced by an attempt abandoned without a reply; writing it again";
  }
}

Result<bool> S3Store::KeptAfterSettle(const std::string& key, uint64_t size,
                                      const std::string& etag) {
  std::this_thread::sleep_for(config_.abandoned_settle);
  Result<ObjectInfo> head = Head(key);
  if (!head.ok()) {
    if (head.status().code() == Status::Code::kNotFound) return false;
    return head.status().WithContext("check " + key + " after an abandoned attempt");
  }
  return head->size == size && (etag.empty() || head->etag == etag);
}

Result<ObjectStore::FileUpload> S3Store::PutFile(std::string_view key, const std::string& path,
                                                 uint64_t size) {
  ARCHIL_RETURN_IF_ERROR(ValidateKey(key));
  if (size > config_.multipart_threshold) return PutMultipart(std::string(key), path, size);
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::FromErrno(errno, "open " + path);
  std::string data;
  Status read = ReadRange(fd, 0, size, &data);
  close(fd);
  ARCHIL_RETURN_IF_ERROR(read);
  ARCHIL_ASSIGN_OR_RETURN(std::string etag, Put(key, data, {Condition::kIfAbsent, ""}));
  return FileUpload{std::move(etag), false};
}

bool S3Store::LandedEarlier(const std::string& key, const std::string& etag) {
  Result<ObjectInfo> head = Head(key);
  return head.ok() && !etag.empty() && head->etag == etag;
}

Result<ObjectStore::FileUpload> S3Store::PutMultipart(const std::string& key,
                                                      const std::string& path, uint64_t size) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::FromErrno(errno, "open " + path);
  struct Closer {
    int fd;
    ~Closer() { close(fd); }
  } closer{fd};

  Call create{"POST", key, {{"uploads", ""}}, {}, {}};
  if (unsigned_payload_) create.headers.emplace_back("x-amz-checksum-algorithm", "CRC32C");
  ARCHIL_ASSIGN_OR_RETURN(HttpResponse created, Send(create));
  if (!Success(created.status)) {
    return FromReply(created, "CreateMultipartUpload " + key, Condition::kNone);
  }
  ARCHIL_ASSIGN_OR_RETURN(std::string upload_id, ParseInitiateMultipart(created.body));

  const uint64_t nparts = (size + config_.part_size - 1) / config_.part_size;
  std::vector<CompletedPart> parts(nparts);
  std::atomic<uint64_t> next{0};
  std::mutex mu;
  Status failure;
  std::atomic<bool> abandoned{false};
  auto worker = [&] {
    std::string buf;
    for (uint64_t i = next.fetch_add(1); i < nparts; i = next.fetch_add(1)) {
      {
        std::lock_guard<std::mutex> lock(mu);
        if (!failure.ok()) return;
      }
      const uint64_t off = i * config_.part_size;
      Status s = ReadRange(fd, off, std::min(config_.part_size, size - off), &buf);
      if (s.ok()) {
        const std::string number = std::to_string(i + 1);
        Call put{"PUT", key, {{"partNumber", number}, {"uploadId", upload_id}}, {}, buf};
        std::string crc32c;
        if (unsigned_payload_) {
          crc32c = ChecksumCrc32c(buf);
          put.headers.emplace_back(kChecksumHeader, crc32c);
        }
        SendInfo info;
        Result<HttpResponse> r = Send(put, &info);
        if (info.abandoned > 0) abandoned = true;
        if (!r.ok()) {
          s = r.status();
        } else if (!Success(r->status)) {
          s = FromReply(*r, "UploadPart " + number + " of " + key, Condition::kNone);
        } else {
          parts[i] = {static_cast<int>(i + 1), UnquoteEtag(r->Header("etag")), crc32c};
        }
      }
      if (!s.ok()) {
        std::lock_guard<std::mutex> lock(mu);
        if (failure.ok()) failure = s;
        return;
      }
    }
  };
  std::vector<std::thread> threads;
  const uint64_t nthreads =
      std::min<uint64_t>(nparts, static_cast<uint64_t>(config_.upload_threads));
  for (uint64_t t = 1; t < nthreads; ++t) {
    threads.emplace_back([&worker, t] {
      NameThisThread("s3-part-" + std::to_string(t));
      worker();
    });
  }
  worker();
  for (std::thread& t : threads) t.join();

  Status result = failure;
  std::string etag;
  if (result.ok()) {
    const std::string body = CompleteMultipartBody(parts);
    SendInfo info;
    Result<HttpResponse> r =
        Send({"POST", key, {{"uploadId", upload_id}}, {{"if-none-match", "*"}}, body}, &info);
    if (info.abandoned > 0) abandoned = true;
    if (!r.ok()) {
      result = r.status();
    } else if (!Success(r->status) && info.attempts > 1 &&
               (r->status == 412 || ParseS3Error(r->body).code == "NoSuchUpload") &&
               LandedEarlier(key, MultipartEtag(parts))) {
      return FileUpload{MultipartEtag(parts), false};
    } else if (!Success(r->status)) {
      result = FromReply(*r, "CompleteMultipartUpload " + key, Condition::kIfAbsent);
    } else {
      Result<std::string> e = ParseCompleteMultipart(r->body);
      if (e.ok()) etag = *e;
      result = e.status();
    }
  }
  if (!result.ok()) {
    // Best effort: an upload left behind costs storage until the bucket's lifecycle rule.
    (void)Send({"DELETE", key, {{"uploadId", upload_id}}, {}, {}});
    return result;
  }
  if (abandoned) {
    // A part sent again may have been cut short by its abandoned attempt on a store that
    // writes in place: the object must have every byte (its ETag is not an MD5 of them).
    ARCHIL_ASSIGN_OR_RETURN(bool kept, KeptAfterSettle(key, size, etag));
    if (!kept) {
      return Status::Unavailable("multipart upload of " + key +
                                 " ended shorter than sent (an attempt abandoned without a "
                                 "reply reached the store late)");
    }
  }
  return FileUpload{std::move(etag), false};
}

Result<std::string> S3Store::Get(std::string_view key, uint64_t offset, uint64_t length) {
  ARCHIL_RETURN_IF_ERROR(ValidateKey(key));
  if (length == 0) return std::string();
  Call call{"GET", std::string(key), {}, {}, {}};
  if (offset != 0 || length != kToEnd) {
    std::string range = "bytes=" + std::to_string(offset) + "-";
    if (length != kToEnd && offset + length > offset) range += std::to_string(offset + length - 1);
    call.headers.emplace_back("range", range);
  }
  ARCHIL_ASSIGN_OR_RETURN(HttpResponse r, Send(call));
  if (r.status == 416) return std::string();  // the range starts at or past the end
  if (!Success(r.status)) return FromReply(r, "GET " + std::string(key), Condition::kNone);
  if (r.status == 200 && (offset != 0 || length != kToEnd)) {
    // A store that ignored Range sent the whole object.
    if (offset >= r.body.size()) return std::string();
    return r.body.substr(offset, length);
  }
  if (length != kToEnd && r.body.size() > length) {
    return Status::Corruption("GET " + std::string(key) + ": more bytes than the range asked");
  }
  return std::move(r.body);
}

Result<ObjectInfo> S3Store::Head(std::string_view key) {
  ARCHIL_RETURN_IF_ERROR(ValidateKey(key));
  ARCHIL_ASSIGN_OR_RETURN(HttpResponse r, Send({"HEAD", std::string(key), {}, {}, {}}));
  if (!Success(r.status)) return FromReply(r, "HEAD " + std::string(key), Condition::kNone);
  ObjectInfo info{std::string(key), 0, UnquoteEtag(r.Header("etag"))};
  const std::string len = r.Header("content-length");
  char* end = nullptr;
  info.size = std::strtoull(len.c_str(), &end, 10);
  if (len.empty() || *end != '\0') {
    return Status::Corruption("HEAD " + std::string(key) + ": no valid Content-Length");
  }
  return info;
}

Result<ListPage> S3Store::List(std::string_view prefix, std::string_view start_after,
                               size_t limit) {
  ARCHIL_RETURN_IF_ERROR(ValidatePrefix(prefix));
  if (limit < 1 || limit > 1000) return Status::InvalidArgument("list limit must be 1..1000");
  Call call{"GET", "", {}, {}, {}};
  call.query = {{"list-type", "2"},
                {"max-keys", std::to_string(limit)},
                {"prefix", config_.prefix + std::string(prefix)}};
  if (!start_after.empty())
    call.query.emplace_back("start-after", config_.prefix + std::string(start_after));
  ARCHIL_ASSIGN_OR_RETURN(HttpResponse r, Send(call));
  if (!Success(r.status)) return FromReply(r, "LIST " + std::string(prefix), Condition::kNone);
  ARCHIL_ASSIGN_OR_RETURN(ListResult parsed, ParseListObjectsV2(r.body));
  ListPage page;
  page.truncated = parsed.truncated;
  for (ObjectInfo& o : parsed.objects) {
    if (o.key.rfind(config_.prefix, 0) != 0) {
      return Status::Corruption("LIST returned key '" + o.key + "' outside the prefix");
    }
    o.key.erase(0, config_.prefix.size());
    page.objects.push_back(std::move(o));
  }
  return page;
}

Status S3Store::Delete(std::string_view key) {
  ARCHIL_RETURN_IF_ERROR(ValidateKey(key));
  ARCHIL_ASSIGN_OR_RETURN(HttpResponse r, Send({"DELETE", std::string(key), {}, {}, {}}));
  if (Success(r.status) || r.status == 404) {
    if (r.status == 404 && ParseS3Error(r.body).code == "NoSuchBucket") {
      return FromReply(r, "DELETE " + std::string(key), Condition::kNone);
    }
    return Status::Ok();
  }
  return FromReply(r, "DELETE " + std::string(key), Condition::kNone);
}

Status S3Store::Probe() {
  ARCHIL_ASSIGN_OR_RETURN(std::string id, SecureRandomHex(8));
  const std::string key = "probe/" + id;
  Result<std::string> first = Put(key, "probe", {Condition::kIfAbsent, ""});
  if (!first.ok()) return first.status().WithContext("probing " + Describe());
  Result<std::string> again = Put(key, "probe", {Condition::kIfAbsent, ""});
  Result<std::string> wrong = Put(key, "probe", {Condition::kIfMatch, "0000"});
  Status removed = Delete(key);
  if (!removed.ok()) return removed.WithContext("probing " + Describe());
  for (const Result<std::string>* r : {&again, &wrong}) {
    const Status::Code c = r->status().code();
    if (!r->ok() && c != Status::Code::kAlreadyExists && c != Status::Code::kFailedPrecondition) {
      return r->status().WithContext("probing " + Describe());
    }
  }
  enforces_conditions_ = !again.ok() && !wrong.ok();
  return Status::Ok();
}

}  // namespace archil::store
