// Server-side SigV4 verification for the S3 fake: parses the Authorization header, checks the
// access key, the scope, the signed-header set, the clock skew and the payload hash, rebuilds the
// canonical request from what was received (with src/store/sigv4.h) and compares signatures in
// constant time. A strict store: the path must be sent exactly as UriEncode(UriDecode(path)).
//
// Thread-safety: pure function.
#pragma once

#include <ctime>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace archil::testing::s3fake {

// A received request, as sent.
struct SignedRequest {
  std::string method;
  std::string raw_path;                                      // the request-target's path, undecoded
  std::vector<std::pair<std::string, std::string>> query;    // decoded name/value pairs
  std::vector<std::pair<std::string, std::string>> headers;  // every received field, as sent
  std::string_view body;                                     // valid while the request is verified
};

struct SigV4Policy {
  std::string access_key;
  std::string secret_key;
  std::string region;
  std::time_t now = 0;  // x-amz-date must be within 15 minutes of this
};

// Why a request is refused: the S3 error to answer with.
struct AuthFailure {
  int http_status = 403;
  std::string code;  // "SignatureDoesNotMatch", "InvalidAccessKeyId", ...
  std::string message;
  bool bad_signature = false;  // counts as a bad signature (wrong signature or path)
};

// nullopt if `req` is correctly signed for `policy`; else the failure to answer.
std::optional<AuthFailure> VerifySigV4(const SignedRequest& req, const SigV4Policy& policy);

}  // namespace archil::testing::s3fake
