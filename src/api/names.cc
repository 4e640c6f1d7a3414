#include "api/names.h"

#include "base/random.h"
#include "base/strings.h"

namespace archil {

Status ValidateDiskName(std::string_view name) {
  bool ok = !name.empty() && name.size() <= 100;
  for (char c : name) {
    ok = ok && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                c == '-' || c == '_');
  }
  if (ok) return Status::Ok();
  return Status::InvalidArgument(
      "invalid disk name: use 1 to 100 characters of A-Z, a-z, 0-9, "
      "'-' and '_'");
}

Status ValidateText(std::string_view field, std::string_view text, size_t max) {
  if (text.size() > max) {
    return Status::InvalidArgument(std::string(field) + " is longer than " + std::to_string(max) +
                                   " bytes");
  }
  if (!IsValidUtf8(text))
    return Status::InvalidArgument(std::string(field) + " is not valid UTF-8");
  for (unsigned char c : text) {
    if (c < 0x20 || c == 0x7f) {
      return Status::InvalidArgument(std::string(field) + " contains a control character");
    }
  }
  return Status::Ok();
}

Status ValidateKeyName(std::string_view name) {
  if (name.empty()) return Status::InvalidArgument("name must not be empty");
  return ValidateText("name", name, 100);
}

}  // namespace archil
