// S3Store: an ObjectStore on any S3-compatible store (AWS S3, MinIO, s3rver, the strict fake in
// tests/s3_fake), over libcurl (http_transport.h), signed with SigV4 (sigv4.h).
//
// Requests are retried by RetryPolicy (retry.h) and signed again on each attempt. Objects larger
// than `multipart_threshold` are uploaded by PutFile in parts of `part_size`, `upload_threads`
// parts at a time, and the upload is completed with If-None-Match: * (aborted on any failure).
//
// Open probes the store: it writes a probe object twice with If-None-Match: * and once with a
// wrong If-Match, then deletes it. A store that accepts the second write or the wrong If-Match
// ignores conditions (s3rver does); EnforcesConditions() then says false, and the server logs
// what that leaves unprotected (docs/tiering.md §5). The probe also proves, before the server
// serves anything, that the bucket exists and the credentials work.
//
// Thread-safety: safe for concurrent use.
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "store/http_transport.h"
#include "store/object_store.h"
#include "store/retry.h"
#include "store/sigv4.h"

namespace archil::store {

struct S3Config {
  std::string endpoint;  // "https://s3.eu-west-1.amazonaws.com", "http://127.0.0.1:9000"
  std::string bucket;
  std::string prefix;  // "" or "a/b/" (ends with '/')
  std::string region = "us-east-1";
  bool virtual_hosted = false;  // bucket.host/key instead of host/bucket/key
  AwsCredentials credentials;
  RetryPolicy retry;
  TransportOptions transport;
  uint64_t multipart_threshold = 16ull << 20;
  uint64_t part_size = 8ull << 20;  // >= 5 MiB, S3's minimum for every part but the last
  int upload_threads = 4;
  // How an object's or a part's bytes are protected on the wire (docs/tiering.md §9, ADR 0030):
  //   kSigned    their SHA-256 is in the signature (x-amz-content-sha256): a store, or anything
  //              between, that changes them is refused. ~1.1 ms of CPU per MiB on this
  //              project's development VM, at both ends.
  //   kUnsigned  "UNSIGNED-PAYLOAD", and their CRC32C in x-amz-checksum-crc32c, which S3
  //              verifies (BadDigest) and keeps (~0.1 ms per MiB); against tampering they are
  //              then only as safe as the channel, TLS. A multipart upload is created with that
  //              algorithm and completed with each part's checksum, as S3 requires.
  //   kAuto      kUnsigned over https, kSigned over http.
  // Requests with no body, and POST bodies (small XML), are signed either way.
  enum class Payload { kAuto, kSigned, kUnsigned } payload = Payload::kAuto;
  // A write that succeeded after an attempt abandoned without a reply (a timeout, a reset) is
  // checked this long after: the abandoned attempt may still reach the store, and a store that
  // writes in place (s3rver) truncates the object when it then sees that attempt cut short.
  std::chrono::milliseconds abandoned_settle{1000};
  bool probe = true;  // false only in unit tests that count requests
};

class S3Store final : public ObjectStore {
 public:
  // Probes the store (above) unless config.probe is false.
  static Result<std::unique_ptr<S3Store>> Open(S3Config config);

  Result<std::string> Put(std::string_view key, std::string_view data,
                          const PutOptions& options) override;
  Result<FileUpload> PutFile(std::string_view key, const std::string& path, uint64_t size) override;
  Result<std::string> Get(std::string_view key, uint64_t offset = 0,
                          uint64_t length = kToEnd) override;
  Result<ObjectInfo> Head(std::string_view key) override;
  Result<ListPage> List(std::string_view prefix, std::string_view start_after,
                        size_t limit) override;
  Status Delete(std::string_view key) override;
  bool EnforcesConditions() const override { return enforces_conditions_; }
  // True if PUT bodies go as UNSIGNED-PAYLOAD with a CRC32C (S3Config::payload).
  bool UnsignedPayload() const { return unsigned_payload_; }
  std::string Describe() const override;

  // Requests sent, retries included (for tests and `archil status`).
  uint64_t requests() const { return requests_.load(); }
  uint64_t retries() const { return retries_.load(); }

 private:
  struct Call {
    std::string method;
    std::string key;  // relative to the prefix; empty for the bucket
    std::vector<std::pair<std::string, std::string>> query;
    std::vector<std::pair<std::string, std::string>> headers;
    std::string_view body;
  };
  explicit S3Store(S3Config config);
  struct SendInfo {
    int attempts = 0;   // sent
    int abandoned = 0;  // of those, ended without a reply: they may still reach the store
  };
  // Sends `call`, retrying as RetryPolicy says; a reply that is not retried (or the last one)
  // is returned whatever its status. kUnavailable when no reply came. `info`, if set, says how
  // the attempts went.
  Result<HttpResponse> Send(const Call& call, SendInfo* info = nullptr);
  // After a write that succeeded with `info.abandoned` > 0: waits abandoned_settle, then true
  // if the object under `key` still has `size` bytes and the ETag `etag` the write's reply gave
  // (unchecked if empty); false if an abandoned attempt has since replaced it.
  Result<bool> KeptAfterSettle(const std::string& key, uint64_t size, const std::string& etag);
  // A conditional write that was sent more than once and then refused (412, or NoSuchUpload for
  // a multipart completion) may have been refused because its own earlier attempt landed and
  // only the reply was lost: true if the object under `key` now has `etag`, the one this write
  // produces (S3's MD5-based ETag; a store with other ETags makes this false).
  bool LandedEarlier(const std::string& key, const std::string& etag);
  HttpRequest Build(const Call& call);
  Status Probe();
  Result<FileUpload> PutMultipart(const std::string& object_key, const std::string& path,
                                  uint64_t size);

  const S3Config config_;
  std::string host_;    // the Host header
  std::string scheme_;  // "http" or "https"
  HttpTransport transport_;
  bool enforces_conditions_ = true;
  bool unsigned_payload_ = false;
  std::atomic<uint64_t> requests_{0}, retries_{0}, seed_{0};
};

}  // namespace archil::store
