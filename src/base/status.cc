#include "base/status.h"

#include <system_error>

namespace archil {

Status Status::FromErrno(int err, std::string_view what) {
  return IoError(std::string(what) + ": " + std::generic_category().message(err));
}

Status Status::WithContext(std::string_view context) const {
  if (ok()) return *this;
  return Status(code_, std::string(context) + ": " + message_);
}

std::string_view CodeName(Status::Code code) {
  switch (code) {
    case Status::Code::kOk:
      return "ok";
    case Status::Code::kInvalidArgument:
      return "invalid_argument";
    case Status::Code::kUnauthenticated:
      return "unauthenticated";
    case Status::Code::kPermissionDenied:
      return "permission_denied";
    case Status::Code::kNotFound:
      return "not_found";
    case Status::Code::kAlreadyExists:
      return "conflict";
    case Status::Code::kTooLarge:
      return "too_large";
    case Status::Code::kUnavailable:
      return "unavailable";
    case Status::Code::kIoError:
      return "io_error";
    case Status::Code::kCorruption:
      return "corruption";
    case Status::Code::kInternal:
      return "internal";
  }
  return "internal";
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  std::string s(CodeName(code_));
  for (char& c : s) c = static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
  return s + ": " + message_;
}

}  // namespace archil
