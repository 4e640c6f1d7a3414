#include "control/share_token.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "base/strings.h"

namespace archil {
namespace {

constexpr size_t kMacBytes = 32;

int Base64UrlValue(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '-') return 62;
  if (c == '_') return 63;
  return -1;
}

std::string Mac(std::string_view data, std::string_view key) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), out, &len);
  return std::string(reinterpret_cast<const char*>(out), len);
}

void PutBigEndian(std::string* out, uint64_t v, int bytes) {
  for (int i = bytes - 1; i >= 0; --i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

// Reads from an authenticated payload; every read is bounds-checked all the same.
class Reader {
 public:
  explicit Reader(std::string_view s) : s_(s) {}
  bool Int(int bytes, uint64_t* v) {
    if (s_.size() < static_cast<size_t>(bytes)) return false;
    *v = 0;
    for (int i = 0; i < bytes; ++i) *v = (*v << 8) | static_cast<unsigned char>(s_[i]);
    s_.remove_prefix(bytes);
    return true;
  }
  bool Bytes(size_t n, std::string* out) {
    if (s_.size() < n) return false;
    out->assign(s_.substr(0, n));
    s_.remove_prefix(n);
    return true;
  }
  bool done() const { return s_.empty(); }

 private:
  std::string_view s_;
};

Status NoSuchLink() { return Status::NotFound("no such share link"); }

}  // namespace

std::string Base64UrlEncode(std::string_view bytes) {
  std::string out = Base64Encode(bytes);
  while (!out.empty() && out.back() == '=') out.pop_back();
  for (char& c : out) c = c == '+' ? '-' : c == '/' ? '_' : c;
  return out;
}

std::optional<std::string> Base64UrlDecode(std::string_view text) {
  if (text.size() % 4 == 1) return std::nullopt;
  std::string out;
  out.reserve(text.size() * 3 / 4);
  uint32_t acc = 0;
  int bits = 0;
  for (char c : text) {
    int v = Base64UrlValue(c);
    if (v < 0) return std::nullopt;
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xff));
    }
  }
  // The leftover bits must be zero: each byte string has exactly one encoding.
  if ((acc & ((1u << bits) - 1)) != 0) return std::nullopt;
  return out;
}

std::string SignShareToken(const ShareClaims& claims, std::string_view key) {
  std::string p;
  const bool v1 = claims.maker == ShareMaker::kApiKey;
  p.push_back(static_cast<char>(v1 ? kShareTokenVersion : kShareTokenVersionMaker));
  PutBigEndian(&p, static_cast<uint64_t>(claims.expires_at), 8);
  PutBigEndian(&p, claims.disk.size(), 1);
  p += claims.disk;
  if (!v1) p.push_back(static_cast<char>(claims.maker));
  PutBigEndian(&p, claims.maker_id.size(), 1);
  p += claims.maker_id;
  PutBigEndian(&p, claims.path.size(), 2);
  p += claims.path;
  p += Mac(p, key);
  return Base64UrlEncode(p);
}

Result<ShareClaims> VerifyShareToken(std::string_view token, std::string_view key) {
  // The longest token: the longest payload, with its MAC, in base64url.
  constexpr size_t kMaxBytes = 1 + 8 + 1 + 255 + 1 + 1 + 255 + 2 + kMaxSharePathBytes + kMacBytes;
  if (token.size() > (kMaxBytes * 4 + 2) / 3) return NoSuchLink();
  std::optional<std::string> raw = Base64UrlDecode(token);
  if (!raw || raw->size() < 1 + 8 + 1 + 1 + 2 + kMacBytes) return NoSuchLink();
  std::string_view payload = std::string_view(*raw).substr(0, raw->size() - kMacBytes);
  std::string_view mac = std::string_view(*raw).substr(payload.size());
  const std::string want = Mac(payload, key);
  if (want.size() != kMacBytes || CRYPTO_memcmp(want.data(), mac.data(), kMacBytes) != 0) {
    return NoSuchLink();
  }
  Reader r(payload);
  ShareClaims c;
  uint64_t version = 0, expires = 0, n = 0;
  if (!r.Int(1, &version)) return NoSuchLink();
  if (version != kShareTokenVersion && version != kShareTokenVersionMaker) return NoSuchLink();
  if (!r.Int(8, &expires) || expires > static_cast<uint64_t>(INT64_MAX)) return NoSuchLink();
  c.expires_at = static_cast<int64_t>(expires);
  if (!r.Int(1, &n) || !r.Bytes(n, &c.disk)) return NoSuchLink();
  if (version == kShareTokenVersionMaker) {
    // Only the kinds version 1 cannot say: an API key's link has one spelling, version 1.
    uint64_t kind = 0;
    if (!r.Int(1, &kind) || kind != static_cast<uint64_t>(ShareMaker::kDiskUser)) {
      return NoSuchLink();
    }
    c.maker = ShareMaker::kDiskUser;
  }
  if (!r.Int(1, &n) || !r.Bytes(n, &c.maker_id)) return NoSuchLink();
  if (!r.Int(2, &n) || n > kMaxSharePathBytes || !r.Bytes(n, &c.path)) return NoSuchLink();
  if (!r.done()) return NoSuchLink();
  return c;
}

}  // namespace archil
