#include "catalog/credentials.h"

#include <openssl/crypto.h>
#include <openssl/sha.h>

#include <algorithm>

#include "base/random.h"
#include "base/strings.h"

namespace archil {
namespace {

constexpr size_t kIdHexLen = 16;
constexpr size_t kSecretHexLen = 48;

std::string_view PrefixOf(CredentialKind kind) {
  return kind == CredentialKind::kApiKey ? "key-" : "adt_";
}

}  // namespace

std::string Sha256Hex(std::string_view data) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(), digest);
  return HexEncode(std::string_view(reinterpret_cast<const char*>(digest), sizeof(digest)));
}

bool SecretMatches(std::string_view secret, std::string_view stored_hash) {
  std::string computed = Sha256Hex(secret);
  if (stored_hash.size() != computed.size()) return false;
  return CRYPTO_memcmp(computed.data(), stored_hash.data(), computed.size()) == 0;
}

Result<IssuedCredential> IssueCredential(CredentialKind kind) {
  IssuedCredential c;
  ARCHIL_ASSIGN_OR_RETURN(c.id, SecureRandomHex(kIdHexLen / 2));
  ARCHIL_ASSIGN_OR_RETURN(std::string secret, SecureRandomHex(kSecretHexLen / 2));
  c.token = std::string(PrefixOf(kind)) + c.id + "_" + secret;
  c.secret_hash = Sha256Hex(secret);
  c.suffix = c.token.substr(c.token.size() - 4);
  return c;
}

Result<ParsedCredential> ParseCredential(std::string_view token) {
  ParsedCredential p;
  if (token.rfind("key-", 0) == 0) {
    p.kind = CredentialKind::kApiKey;
  } else if (token.rfind("adt_", 0) == 0) {
    p.kind = CredentialKind::kDiskToken;
  } else {
    return Status::InvalidArgument(
        "not an archil credential (API keys start with 'key-', disk tokens with 'adt_')");
  }
  std::string_view rest = token.substr(4);
  if (rest.size() != kIdHexLen + 1 + kSecretHexLen || rest[kIdHexLen] != '_' ||
      !IsLowerHex(rest.substr(0, kIdHexLen), kIdHexLen) ||
      !IsLowerHex(rest.substr(kIdHexLen + 1), kSecretHexLen)) {
    return Status::InvalidArgument("malformed credential: expected " +
                                   std::string(PrefixOf(p.kind)) +
                                   "<16 hex digits>_<48 hex digits>");
  }
  p.id = std::string(rest.substr(0, kIdHexLen));
  p.secret = std::string(rest.substr(kIdHexLen + 1));
  return p;
}

Result<std::string> CredentialFromAuthorization(std::string_view header) {
  if (header.empty()) {
    return Status::Unauthenticated(
        "missing Authorization header: send 'Authorization: Bearer <API key>'");
  }
  std::string_view value = header;
  // The scheme is case-insensitive (RFC 9110 §11.1): "Bearer", "bearer", "BEARER" alike.
  auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
  const bool bearer = value.size() >= 7 && value[6] == ' ' &&
                      std::equal(value.begin(), value.begin() + 6, "bearer",
                                 [&](char a, char b) { return lower(a) == b; });
  if (bearer) {
    value = value.substr(7);
  } else if (value.rfind("key-key-", 0) == 0) {
    value = value.substr(4);  // "key-<key>" where <key> itself starts with "key-"
  } else if (value.rfind("key-", 0) != 0 && value.rfind("adt_", 0) != 0) {
    return Status::Unauthenticated(
        "unsupported Authorization scheme: use 'Bearer <API key>' or 'key-<API key>'");
  }
  while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  while (!value.empty() && value.back() == ' ') value.remove_suffix(1);
  if (value.empty()) return Status::Unauthenticated("empty credential in Authorization header");
  return std::string(value);
}

}  // namespace archil
