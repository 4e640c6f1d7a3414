#include "s3_sigv4_verify.h"

#include <openssl/crypto.h>

#include <algorithm>
#include <cstdlib>

#include "s3_fake_util.h"
#include "store/sigv4.h"

namespace archil::testing::s3fake {
namespace {

std::string Lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// The first value of header `name` (any case); empty if absent.
std::string Header(const SignedRequest& req, std::string_view name) {
  const std::string want = Lower(std::string(name));
  for (const auto& [k, v] : req.headers) {
    if (Lower(k) == want) return v;
  }
  return "";
}

std::optional<AuthFailure> Fail(bool bad_signature, int status, std::string code,
                                std::string message) {
  return AuthFailure{status, std::move(code), std::move(message), bad_signature};
}

}  // namespace

std::optional<AuthFailure> VerifySigV4(const SignedRequest& req, const SigV4Policy& policy) {
  std::string auth = Header(req, "Authorization");
  static constexpr std::string_view kAlgo = "AWS4-HMAC-SHA256 ";
  if (auth.compare(0, kAlgo.size(), kAlgo) != 0) {
    return Fail(false, 403, "AccessDenied", "missing or unsupported Authorization");
  }
  std::string credential, signed_headers, signature;
  std::string_view rest(auth);
  rest.remove_prefix(kAlgo.size());
  while (!rest.empty()) {
    size_t comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    size_t eq = item.find('=');
    if (eq == std::string_view::npos) continue;
    std::string_view name = item.substr(0, eq), value = item.substr(eq + 1);
    if (name == "Credential") credential = value;
    if (name == "SignedHeaders") signed_headers = value;
    if (name == "Signature") signature = value;
  }
  // Credential=AK/DATE/REGION/s3/aws4_request
  std::vector<std::string> scope;
  for (size_t start = 0;;) {
    size_t slash = credential.find('/', start);
    scope.push_back(credential.substr(start, slash - start));
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  if (scope.size() != 5 || signed_headers.empty() || signature.empty()) {
    return Fail(false, 400, "AuthorizationHeaderMalformed", "malformed Authorization header");
  }
  if (scope[0] != policy.access_key) {
    return Fail(false, 403, "InvalidAccessKeyId",
                "The AWS Access Key Id you provided does not exist in our records.");
  }
  if (scope[2] != policy.region || scope[3] != "s3" || scope[4] != "aws4_request") {
    return Fail(false, 400, "AuthorizationHeaderMalformed", "wrong region or service in scope");
  }
  std::vector<std::string> names;
  for (size_t start = 0;;) {
    size_t semi = signed_headers.find(';', start);
    names.push_back(signed_headers.substr(start, semi - start));
    if (semi == std::string::npos) break;
    start = semi + 1;
  }
  for (const char* must : {"host", "x-amz-date", "x-amz-content-sha256"}) {
    if (std::find(names.begin(), names.end(), must) == names.end()) {
      return Fail(false, 403, "AccessDenied", std::string("SignedHeaders must include ") + must);
    }
  }
  std::string amz_date = Header(req, "x-amz-date");
  std::time_t t = 0;
  if (!ParseAmzDate(amz_date, &t)) {
    return Fail(false, 403, "AccessDenied", "bad or missing x-amz-date");
  }
  if (std::llabs(static_cast<long long>(t) - static_cast<long long>(policy.now)) > 15 * 60) {
    return Fail(false, 403, "RequestTimeTooSkewed",
                "The difference between the request time and the current time is too large.");
  }
  if (scope[1] != amz_date.substr(0, 8)) {
    return Fail(false, 403, "SignatureDoesNotMatch", "credential date differs from x-amz-date");
  }
  std::string payload = Header(req, "x-amz-content-sha256");
  if (payload != "UNSIGNED-PAYLOAD" && payload != store::Sha256Hex(req.body)) {
    return Fail(false, 400, "XAmzContentSHA256Mismatch",
                "The provided 'x-amz-content-sha256' header does not match what was computed.");
  }
  std::string decoded_path;
  if (!store::UriDecode(req.raw_path, &decoded_path) ||
      store::UriEncode(decoded_path, false) != req.raw_path) {
    return Fail(true, 403, "SignatureDoesNotMatch", "the path is not canonically encoded");
  }
  store::SigningInput in;
  in.method = req.method;
  in.canonical_path = req.raw_path;
  in.query = req.query;
  in.payload_hash = payload;
  for (const auto& name : names) {
    bool found = false;
    for (const auto& [field, value] : req.headers) {
      if (Lower(field) == name) {
        in.headers.emplace_back(name, value);
        found = true;
      }
    }
    if (!found) {
      return Fail(true, 403, "SignatureDoesNotMatch", "a signed header is missing: " + name);
    }
  }
  store::AwsCredentials creds{policy.access_key, policy.secret_key, ""};
  store::Signature want = store::Sign(in, creds, amz_date, policy.region, "s3");
  if (want.signed_headers != signed_headers || want.signature.size() != signature.size() ||
      CRYPTO_memcmp(want.signature.data(), signature.data(), signature.size()) != 0) {
    return Fail(true, 403, "SignatureDoesNotMatch",
                "The request signature we calculated does not match the signature you "
                "provided.");
  }
  return std::nullopt;
}

}  // namespace archil::testing::s3fake
