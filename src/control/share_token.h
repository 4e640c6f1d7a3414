// Share-link tokens (docs/api.md "Share links"): what a link grants, signed by the server with the
// catalog's share key (Catalog::ShareKey) so that anyone may hold it and no one may change it.
//
// Layout, base64url without padding in the URL. Version 1, a link made with an API key:
//   1 byte version (1) | 8 bytes expiry (Unix seconds, big-endian)
//   | 1 byte length + disk id | 1 byte length + API key id | 2 bytes length (big-endian) + path
//   | 32 bytes HMAC-SHA256(share key, every byte before it)
// Version 2, a link made with another credential, says which kind after the disk id:
//   1 byte version (2) | 8 bytes expiry | 1 byte length + disk id
//   | 1 byte kind (2: a disk user, i.e. a disk token) | 1 byte length + its identifier
//   | 2 bytes length + path | 32 bytes MAC
// API-key links are still written as version 1 (so each claim set has one spelling, and links
// made before version 2 keep working); a version-2 token of any other kind is refused.
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

inline constexpr uint8_t kShareTokenVersion = 1;       // an API key made the link
inline constexpr uint8_t kShareTokenVersionMaker = 2;  // the kind of maker is a field
// The longest path a link may name, in bytes (its token then fits the API's 8 KiB target limit).
inline constexpr size_t kMaxSharePathBytes = 4096;

// The credential that made a link; the link ends when it is gone (docs/api.md "Share links").
// The values are the version-2 kind byte.
enum class ShareMaker : uint8_t {
  kApiKey = 1,    // an API key (its id)
  kDiskUser = 2,  // a disk user of type token (its identifier), of the link's disk's lineage
};

struct ShareClaims {
  std::string disk;        // the disk's id (a root or a branch)
  std::string maker_id;    // the id of the credential that made the link (see `maker`)
  std::string path;        // from the disk's root, without a leading '/'
  int64_t expires_at = 0;  // Unix seconds; the link fails from this second on
  ShareMaker maker = ShareMaker::kApiKey;
  bool operator==(const ShareClaims&) const = default;
};

// The token for `claims`, signed with `key`. REQUIRES: disk and maker_id at most 255 bytes, path at
// most kMaxSharePathBytes.
std::string SignShareToken(const ShareClaims& claims, std::string_view key);

// The claims of `token` if `key` signed it. NotFound ("no such share link") for anything else:
// not base64url, too short or long, a bad MAC, an unknown version or kind, inconsistent lengths.
// Expiry is the caller's to check.
Result<ShareClaims> VerifyShareToken(std::string_view token, std::string_view key);

// RFC 4648 §5 base64url without padding. Decode refuses padding, other characters and a length
// no encoding has (nullopt-like: an empty optional).
std::string Base64UrlEncode(std::string_view bytes);
std::optional<std::string> Base64UrlDecode(std::string_view text);

}  // namespace archil
