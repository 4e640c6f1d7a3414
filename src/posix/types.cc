#include "posix/types.h"

#include <cerrno>

namespace archil::posix {

Timespec Timespec::FromNanos(int64_t nanos) {
  int64_t sec = nanos / 1'000'000'000, rem = nanos % 1'000'000'000;
  if (rem < 0) {
    rem += 1'000'000'000;
    --sec;
  }
  return Timespec{sec, static_cast<uint32_t>(rem)};
}

Timespec Timespec::FromMicros(int64_t micros) {
  int64_t sec = micros / 1000000;
  int64_t rem = micros % 1000000;
  if (rem < 0) {
    rem += 1000000;
    --sec;
  }
  return {sec, static_cast<uint32_t>(rem * 1000)};
}

std::string NameKey(Ino dir, std::string_view name) {
  const uint64_t number = dir.value();
  std::string key(reinterpret_cast<const char*>(&number), sizeof number);
  key.append(name);
  return key;
}

Status ValidateName(std::string_view name) {
  if (name.empty() || name == "." || name == "..") {
    return Status::Errno(EINVAL, "invalid file name '" + std::string(name) + "'");
  }
  if (name.size() > kNameMax) {
    return Status::Errno(ENAMETOOLONG, "file name longer than 255 bytes");
  }
  if (name.find('/') != std::string_view::npos || name.find('\0') != std::string_view::npos) {
    return Status::Errno(EINVAL, "file name with '/' or NUL");
  }
  return Status::Ok();
}

Status ValidateXattrName(std::string_view name) {
  if (name.empty()) return Status::Errno(EINVAL, "empty xattr name");
  if (name.size() > kXattrNameMax) return Status::Errno(ERANGE, "xattr name over 255 bytes");
  for (std::string_view prefix : {"user.", "trusted.", "security."}) {
    if (name.size() > prefix.size() && name.substr(0, prefix.size()) == prefix) {
      return Status::Ok();
    }
  }
  if (name == "system.posix_acl_access" || name == "system.posix_acl_default") {
    return Status::Ok();
  }
  return Status::Errno(EOPNOTSUPP, "xattr namespace not supported: " + std::string(name));
}

Status CheckXattrSpace(const XattrTotals& now, std::string_view name,
                       std::optional<size_t> old_value_size, size_t value_size) {
  const size_t names = now.names + (old_value_size ? 0 : name.size() + 1);
  const size_t values = now.values - old_value_size.value_or(0) + value_size;
  if (names > kXattrNamesMax) {
    return Status::Errno(ENOSPC, "the inode's xattr names would take " + std::to_string(names) +
                                     " bytes, over 64 KiB");
  }
  if (values > kXattrValuesMax) {
    return Status::Errno(ENOSPC, "the inode's xattr values would take " + std::to_string(values) +
                                     " bytes, over 1 MiB");
  }
  return Status::Ok();
}

}  // namespace archil::posix
