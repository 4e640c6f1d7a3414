// Fuzzes what a share link's requests bring from outside: the token in GET /api/share/{token}
// (control/share_token.h) and the body of POST /api/disks/{id}/share (api/share_wire.h). A token
// must verify only if it is exactly what the key signed, and nothing may crash.
//
// Input layout: a first byte choosing the decoder (even: token, odd: body), then the text. A
// token is tried as is, and also re-signed and mutated by the rest of the input's first byte, so
// that the parser behind the MAC is reached too.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>

#include "api/share_wire.h"
#include "control/share_token.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string key(32, 'k');
  std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] % 2 == 1) {
    archil::Result<archil::wire::ShareRequest> r = archil::wire::DecodeShareRequest(text);
    if (r.ok() && (r->expires_in == 0 || r->expires_in > archil::wire::kMaxShareSeconds)) {
      __builtin_trap();
    }
    return 0;
  }
  archil::Result<archil::ShareClaims> c = archil::VerifyShareToken(text, key);
  if (c.ok() && archil::SignShareToken(*c, key) != text) __builtin_trap();  // one spelling each
  // Claims from the input, signed: they verify to themselves.
  archil::ShareClaims claims;
  claims.disk = text.substr(0, std::min<size_t>(text.size(), 255));
  claims.maker_id = text.substr(0, std::min<size_t>(text.size() / 2, 255));
  // Both versions: an API key's link (1) and a disk user's (2).
  if (size % 2 == 0) claims.maker = archil::ShareMaker::kDiskUser;
  claims.path = text.substr(0, std::min(text.size(), archil::kMaxSharePathBytes));
  claims.expires_at = static_cast<int64_t>(size) * 1000;
  const std::string token = archil::SignShareToken(claims, key);
  archil::Result<archil::ShareClaims> back = archil::VerifyShareToken(token, key);
  if (!back.ok() || !(*back == claims)) __builtin_trap();
  // The payload with one byte changed, re-encoded: never accepted.
  std::optional<std::string> raw = archil::Base64UrlDecode(token);
  if (!raw || raw->empty()) __builtin_trap();
  (*raw)[data[0] % raw->size()] ^= static_cast<char>(1 | data[size - 1]);
  if (archil::VerifyShareToken(archil::Base64UrlEncode(*raw), key).ok()) __builtin_trap();
  return 0;
}
