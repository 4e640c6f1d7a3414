// Share-link tokens (docs/api.md "Share links"): what a link grants, signed by the server with the
// catalog's share key (Catalog::ShareKey) so that anyone may hold it and no one may change it.
//
// Layout, version 1, base64url without padding in the URL:
//   1 byte version (1) | 8 bytes expiry (Unix seconds, big-endian)
//   | 1 byte length + disk id | 1 byte length + API key id | 2 bytes length (big-endian) + path
//   | 32 bytes HMAC-SHA256(share key, every byte before it)
// The MAC is checked (in constant time) before any field is read, so a forged or damaged token
// reveals nothing and reaches no parser. Rotating the key invalidates every token.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace archil {

inline constexpr uint8_t kShareTokenVersion = 1;
// The longest path a link may name, in bytes (its token then fits the API's 8 KiB target limit).
inline constexpr size_t kMaxSharePathBytes = 4096;

struct ShareClaims {
  std::string disk;        // the disk's id (a root or a branch)
  std::string key_id;      // the id of the API key that made the link
  std::string path;        // from the disk's root, without a leading '/'
  int64_t expires_at = 0;  // Unix seconds; the link fails from this second on
  bool operator==(const ShareClaims&) const = default;
};

// The token for `claims`, signed with `key`. REQUIRES: disk and key_id at most 255 bytes, path at
// most kMaxSharePathBytes.
std::string SignShareToken(const ShareClaims& claims, std::string_view key);

// The claims of `token` if `key` signed it. NotFound ("no such share link") for anything else:
// not base64url, too short or long, a bad MAC, an unknown version, inconsistent lengths. Expiry
// is the caller's to check.
Result<ShareClaims> VerifyShareToken(std::string_view token, std::string_view key);

// RFC 4648 §5 base64url without padding. Decode refuses padding, other characters and a length
// no encoding has (nullopt-like: an empty optional).
std::string Base64UrlEncode(std::string_view bytes);
std::optional<std::string> Base64UrlDecode(std::string_view text);

}  // namespace archil
