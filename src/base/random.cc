#include "base/random.h"

#include <sys/random.h>

#include <cerrno>

#include "base/strings.h"

namespace archil {

Status SecureRandomBytes(void* out, size_t n) {
  auto* p = static_cast<unsigned char*>(out);
  while (n > 0) {
    ssize_t got = getrandom(p, n, 0);
    if (got < 0) {
      if (errno == EINTR) continue;
      return Status::FromErrno(errno, "getrandom");
    }
    p += got;
    n -= static_cast<size_t>(got);
  }
  return Status::Ok();
}

Result<std::string> SecureRandomHex(size_t n) {
  std::string bytes(n, '\0');
  ARCHIL_RETURN_IF_ERROR(SecureRandomBytes(bytes.data(), n));
  return HexEncode(bytes);
}

}  // namespace archil
