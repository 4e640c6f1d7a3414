#include "store/sigv4.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>

#include <algorithm>
#include <cctype>

#include "base/crc32c.h"
#include "base/strings.h"

namespace archil::store {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Header values are signed trimmed, with inner runs of spaces folded to one.
std::string TrimFold(std::string_view v) {
  std::string out;
  bool space = false;
  for (char c : v) {
    if (c == ' ' || c == '\t') {
      space = !out.empty();
      continue;
    }
    if (space) out.push_back(' ');
    space = false;
    out.push_back(c);
  }
  return out;
}

}  // namespace

std::string Sha256Hex(std::string_view data) {
  unsigned char md[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(), md);
  return HexEncode(std::string_view(reinterpret_cast<const char*>(md), sizeof(md)));
}

std::string ChecksumCrc32c(std::string_view body) {
  const uint32_t crc = Crc32c(body);
  const char be[4] = {static_cast<char>(crc >> 24), static_cast<char>(crc >> 16),
                      static_cast<char>(crc >> 8), static_cast<char>(crc)};
  return Base64Encode(std::string_view(be, 4));
}

std::string HmacSha256(std::string_view key, std::string_view data) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), md, &len);
  return std::string(reinterpret_cast<const char*>(md), len);
}

std::string UriEncode(std::string_view s, bool encode_slash) {
  static constexpr char kDigits[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~' ||
        (c == '/' && !encode_slash)) {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kDigits[c >> 4]);
      out.push_back(kDigits[c & 15]);
    }
  }
  return out;
}

bool UriDecode(std::string_view s, std::string* out) {
  out->clear();
  out->reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out->push_back(s[i]);
      continue;
    }
    if (i + 2 >= s.size()) return false;
    auto nibble = [](char c) -> int {
      if (c >= '0' && c <= '9') return c - '0';
      if (c >= 'a' && c <= 'f') return c - 'a' + 10;
      if (c >= 'A' && c <= 'F') return c - 'A' + 10;
      return -1;
    };
    int hi = nibble(s[i + 1]), lo = nibble(s[i + 2]);
    if (hi < 0 || lo < 0) return false;
    out->push_back(static_cast<char>(hi << 4 | lo));
    i += 2;
  }
  return true;
}

std::string AmzDate(std::time_t t) {
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[20];
  std::strftime(buf, sizeof(buf), "%Y%m%dT%H%M%SZ", &tm);
  return buf;
}

std::string SigningKey(std::string_view secret, std::string_view date, std::string_view region,
                       std::string_view service) {
  std::string k = HmacSha256("AWS4" + std::string(secret), date);
  k = HmacSha256(k, region);
  k = HmacSha256(k, service);
  return HmacSha256(k, "aws4_request");
}

Signature Sign(const SigningInput& in, const AwsCredentials& creds, std::string_view amz_date,
               std::string_view region, std::string_view service) {
  Signature sig;
  // Query: each name and value encoded (slashes too), sorted by encoded name, then value.
  std::vector<std::pair<std::string, std::string>> query;
  query.reserve(in.query.size());
  for (const auto& [k, v] : in.query) query.emplace_back(UriEncode(k, true), UriEncode(v, true));
  std::sort(query.begin(), query.end());
  std::string canonical_query;
  for (const auto& [k, v] : query) {
    if (!canonical_query.empty()) canonical_query.push_back('&');
    canonical_query += k + "=" + v;
  }
  // Headers: lower-case names, sorted; a repeated name's values joined by ','.
  std::vector<std::pair<std::string, std::string>> headers;
  headers.reserve(in.headers.size());
  for (const auto& [k, v] : in.headers) headers.emplace_back(Lower(k), TrimFold(v));
  std::stable_sort(headers.begin(), headers.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::string canonical_headers;
  for (size_t i = 0; i < headers.size(); ++i) {
    if (i > 0 && headers[i].first == headers[i - 1].first) {
      canonical_headers.pop_back();  // the '\n'
      canonical_headers += "," + headers[i].second + "\n";
      continue;
    }
    if (!sig.signed_headers.empty()) sig.signed_headers.push_back(';');
    sig.signed_headers += headers[i].first;
    canonical_headers += headers[i].first + ":" + headers[i].second + "\n";
  }
  sig.canonical_request = in.method + "\n" + in.canonical_path + "\n" + canonical_query + "\n" +
                          canonical_headers + "\n" + sig.signed_headers + "\n" + in.payload_hash;
  const std::string_view date = amz_date.substr(0, 8);
  const std::string scope =
      std::string(date) + "/" + std::string(region) + "/" + std::string(service) + "/aws4_request";
  sig.string_to_sign = "AWS4-HMAC-SHA256\n" + std::string(amz_date) + "\n" + scope + "\n" +
                       Sha256Hex(sig.canonical_request);
  sig.signature = HexEncode(
      HmacSha256(SigningKey(creds.secret_access_key, date, region, service), sig.string_to_sign));
  sig.authorization = "AWS4-HMAC-SHA256 Credential=" + creds.access_key_id + "/" + scope +
                      ", SignedHeaders=" + sig.signed_headers + ", Signature=" + sig.signature;
  return sig;
}

}  // namespace archil::store
