// AWS Signature Version 4 (the S3 flavour): the canonical request, the string to sign, the
// derived signing key and the Authorization header, as AWS's "Signing AWS API requests" defines
// them. sigv4_test.cc checks them against AWS's published examples.
//
// The caller gives the request in canonical pieces: the path already URI-encoded once
// (UriEncode(segment, false) for each segment; S3 never normalises or double-encodes it), the
// query as decoded name/value pairs, and the headers to sign (Host included). The strict S3 fake
// (tests/s3_fake) verifies requests with the same functions.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <ctime>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace archil::store {

struct AwsCredentials {
  std::string access_key_id;
  std::string secret_access_key;
  std::string session_token;  // empty unless temporary credentials
};

struct SigningInput {
  std::string method;          // "GET", "PUT", ...
  std::string canonical_path;  // "/bucket/key%24x": encoded once, '/' kept
  std::vector<std::pair<std::string, std::string>> query;    // decoded; any order
  std::vector<std::pair<std::string, std::string>> headers;  // any case and order; values as sent
  std::string payload_hash;  // hex SHA-256 of the body, or "UNSIGNED-PAYLOAD"
};

struct Signature {
  std::string canonical_request;
  std::string string_to_sign;
  std::string signed_headers;  // "host;x-amz-content-sha256;x-amz-date"
  std::string signature;       // 64 hex digits
  std::string authorization;   // the Authorization header's value
};

// Signs `in` at `amz_date` ("20130524T000000Z") for `region` and `service` ("s3").
Signature Sign(const SigningInput& in, const AwsCredentials& creds, std::string_view amz_date,
               std::string_view region, std::string_view service);

// The signing key: HMAC chain over "AWS4" + secret, date (YYYYMMDD), region, service,
// "aws4_request"; 32 raw bytes.
std::string SigningKey(std::string_view secret, std::string_view date, std::string_view region,
                       std::string_view service);

// RFC 3986 percent-encoding as SigV4 wants it: unreserved (A-Z a-z 0-9 - . _ ~) kept, every
// other byte %XX in upper-case hex; '/' kept unless `encode_slash`.
std::string UriEncode(std::string_view s, bool encode_slash);
// Decodes %XX escapes (and nothing else: '+' stays '+'). False on a malformed escape.
bool UriDecode(std::string_view s, std::string* out);

std::string Sha256Hex(std::string_view data);
// The value of S3's x-amz-checksum-crc32c header for `body`: the base64 of its CRC32C,
// big-endian ("AAAAAA==" for an empty body).
std::string ChecksumCrc32c(std::string_view body);
std::string HmacSha256(std::string_view key, std::string_view data);  // 32 raw bytes
// "YYYYMMDDTHHMMSSZ" for a time in seconds since the epoch (UTC).
std::string AmzDate(std::time_t t);
// The hex SHA-256 of the empty string, S3's payload hash for a request without a body.
inline constexpr std::string_view kEmptySha256 =
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

}  // namespace archil::store
