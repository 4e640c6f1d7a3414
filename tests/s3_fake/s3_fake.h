// S3Fake: a strict in-memory S3-compatible server for tests and benchmarks.
//
// Listens on a loopback TCP port (thread per connection, HTTP/1.1 keep-alive) and speaks the
// path-style subset of S3 the project uses: PUT/GET/HEAD/DELETE object (Range, If-None-Match: *,
// If-Match), ListObjectsV2, and multipart uploads. Every request's SigV4 signature is verified
// with src/store/sigv4.h and refused when wrong, like a strict store. Faults (latency, a shared
// bandwidth limit, injected errors, hangs, torn responses, outages) can be switched on at any time.
//
// Thread-safety: every public method is thread-safe. Faults take effect from the next request.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"

namespace archil::testing {

struct S3FakeOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 0;  // 0 = any free port; see S3Fake::port()
  std::string access_key = "archil-test";
  std::string secret_key = "archil-test-secret";
  std::string region = "us-east-1";
  std::vector<std::string> buckets = {"archil"};
  bool enforce_conditions = true;  // honour If-None-Match / If-Match
};

class S3Fake {
 public:
  // Binds and starts serving. Errors: kUnavailable if the address cannot be bound,
  // kInvalidArgument for a bad host.
  static Result<std::unique_ptr<S3Fake>> Start(S3FakeOptions options);
  ~S3Fake();  // stops: closes every connection and joins every thread
  S3Fake(const S3Fake&) = delete;
  S3Fake& operator=(const S3Fake&) = delete;

  uint16_t port() const;
  std::string endpoint() const;  // "http://127.0.0.1:PORT"

  // --- Faults (take effect from the next request) ---
  // Sleep this long before the first byte of every response.
  void SetFirstByteLatency(std::chrono::microseconds d);
  // 0 = unlimited. One token bucket shared by all connections, charged for request bodies and
  // response bodies.
  void SetBandwidth(uint64_t bytes_per_second);
  // The next `count` requests answer `http_status` with S3 error `code` and are not applied.
  void FailNext(int count, int http_status, std::string code);
  // Each request fails with probability p (deterministic in `seed`). p = 0 turns it off.
  void SetErrorRate(double p, int http_status, std::string code, uint64_t seed);
  // On: requests are read but never answered. Turning it off closes the hung connections.
  void SetHang(bool on);
  // The `count` responses after the next `after` send their headers and half their body, then
  // close; one with no body is not sent at all. The request itself is applied: the reply is lost.
  void TearNext(int count, int after = 0);
  // On: accepted connections are closed at once and open ones are closed (an outage).
  void SetUnreachable(bool on);
  // Every later request on `bucket` answers 404 NoSuchBucket; its objects are dropped.
  void RemoveBucket(const std::string& bucket);
  // Off = behave like stores that ignore If-None-Match / If-Match.
  void SetEnforceConditions(bool on);

  struct Counters {
    uint64_t requests = 0, puts = 0, gets = 0, heads = 0, lists = 0, deletes = 0;
    uint64_t multipart_creates = 0, parts = 0, completes = 0, aborts = 0;
    uint64_t bytes_in = 0, bytes_out = 0;  // request / response body bytes
    uint64_t bad_signatures = 0, precondition_failed = 0, injected_errors = 0;
    // PUT bodies (objects and parts) sent as UNSIGNED-PAYLOAD; x-amz-checksum-crc32c values that
    // matched their body (a mismatch is answered 400 BadDigest and not counted).
    uint64_t unsigned_payloads = 0, checksums_verified = 0;
  };
  Counters counters() const;

  // --- Direct access to the stored objects (no HTTP, no faults) ---
  std::optional<std::string> Object(const std::string& bucket, const std::string& key) const;
  std::vector<std::string> Keys(const std::string& bucket) const;  // bytewise order
  // Stores `data` (creating the bucket if needed).
  void PutDirect(const std::string& bucket, const std::string& key, std::string data);

  class Impl;

 private:
  explicit S3Fake(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace archil::testing
