#include "api/names.h"

#include "base/random.h"
#include "base/strings.h"

namespace archil {

namespace {

bool IsNameChars(std::string_view name, bool dots) {
  bool ok = !name.empty() && name.size() <= 100;
  for (char c : name) {
    ok = ok && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                c == '-' || c == '_' || (dots && c == '.'));
  }
  return ok;
}

}  // namespace

Status ValidateDiskName(std::string_view name) {
  if (IsNameChars(name, false)) return Status::Ok();
  return Status::InvalidArgument(
      "invalid disk name: use 1 to 100 characters of A-Z, a-z, 0-9, "
      "'-' and '_'");
}

Status ValidateBranchName(std::string_view name) {
  if (IsNameChars(name, false)) return Status::Ok();
  return Status::InvalidArgument(
      "invalid branch name: use 1 to 100 characters of A-Z, a-z, 0-9, '-' and '_'");
}

Status ValidateCheckpointName(std::string_view name) {
  if (IsNameChars(name, true)) return Status::Ok();
  return Status::InvalidArgument(
      "invalid checkpoint name: use 1 to 100 characters of A-Z, a-z, 0-9, '.', '-' and '_'");
}

Status ValidateIdempotencyKey(std::string_view key) {
  bool ok = !key.empty() && key.size() <= 255;
  for (char c : key) ok = ok && c > 0x20 && c < 0x7f;
  if (ok) return Status::Ok();
  return Status::InvalidArgument(
      "invalid Idempotency-Key: use 1 to 255 printable ASCII characters without spaces");
}

Status ValidateText(std::string_view field, std::string_view text, size_t max) {
  if (text.size() > max) {
    return Status::InvalidArgument(std::string(field) + " is longer than " + std::to_string(max) +
                                   " bytes");
  }
  if (!IsValidUtf8(text))
    return Status::InvalidArgument(std::string(field) + " is not valid UTF-8");
  // Code points, from UTF-8 known to be valid: C0 and C1 controls, and the invisible characters
  // that reorder or break the text around them (bidirectional overrides, isolates and marks,
  // line and paragraph separators), which would let a name show as something else in a list.
  for (size_t i = 0; i < text.size();) {
    const auto b = static_cast<unsigned char>(text[i]);
    const size_t len = b < 0x80 ? 1 : b < 0xe0 ? 2 : b < 0xf0 ? 3 : 4;
    uint32_t cp = len == 1 ? b : b & (0xff >> (len + 1));
    for (size_t k = 1; k < len; ++k)
      cp = (cp << 6) | (static_cast<unsigned char>(text[i + k]) & 0x3f);
    i += len;
    const bool control = cp < 0x20 || (cp >= 0x7f && cp <= 0x9f);
    const bool invisible = cp == 0x061c || cp == 0x200e || cp == 0x200f ||
                           (cp >= 0x2028 && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
    if (control || invisible) {
      return Status::InvalidArgument(std::string(field) +
                                     (control ? " contains a control character"
                                              : " contains an invisible formatting character"));
    }
  }
  return Status::Ok();
}

Status ValidateKeyName(std::string_view name) {
  if (name.empty()) return Status::InvalidArgument("name must not be empty");
  return ValidateText("name", name, 100);
}

}  // namespace archil
