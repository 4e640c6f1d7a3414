// Credentials: API keys (control plane) and disk tokens (mounting a disk).
//
// Formats (the prefix says which kind a string is, so a mix-up gets a precise error):
//   API key     key-<id>_<secret>    id: 16 hex digits, secret: 48 hex digits (192 bits)
//   disk token  adt_<id>_<secret>    same sizes
// Only SHA-256(secret) is stored. The secret is high-entropy, so a fast hash is enough (no KDF,
// a password KDF would only slow down every request without making a 192-bit secret any harder to
// guess), and comparison is constant-time (CRYPTO_memcmp).
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"

namespace archil {

enum class CredentialKind { kApiKey, kDiskToken };

struct IssuedCredential {
  std::string id;           // public, stable: used in URLs and listings
  std::string token;        // the full credential; shown to the user once, never stored
  std::string secret_hash;  // hex SHA-256 of the secret; what the catalog stores
  std::string suffix;       // last 4 characters of `token`, to tell keys apart in listings
};

struct ParsedCredential {
  CredentialKind kind;
  std::string id;
  std::string secret;
};

Result<IssuedCredential> IssueCredential(CredentialKind kind);

// Splits a credential string; InvalidArgument names what is malformed (never echoes the secret).
Result<ParsedCredential> ParseCredential(std::string_view token);

// The credential carried by an Authorization header value. Accepts "Bearer <key>" and
// "key-<key>" (both forms Archil's API accepts); since API keys themselves start with "key-", a
// bare API key works too. Unauthenticated when the header is empty or has another scheme.
Result<std::string> CredentialFromAuthorization(std::string_view header);

// Lower-case hex SHA-256.
std::string Sha256Hex(std::string_view data);

// Constant-time: true iff Sha256Hex(secret) == stored_hash. Takes the same time for any input of
// the same length, whether or not it matches.
bool SecretMatches(std::string_view secret, std::string_view stored_hash);

}  // namespace archil
