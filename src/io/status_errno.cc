#include "io/status_errno.h"

#include <cerrno>
#include <cstring>
#include <string>

namespace archil::io {

int ErrnoOf(const Status& s) {
  if (s.ok()) return 0;
  if (s.code() == Status::Code::kNotFound) return ENOENT;
  if (s.code() == Status::Code::kAlreadyExists) return EEXIST;
  // Status::FromErrno formats "<what>: <strerror(err)>"; recover err from the suffix. Once Status
  // carries the errno itself this becomes a field read.
  static constexpr int kKnown[] = {ENOENT,  EEXIST, ENOSPC, ENOTEMPTY, EXDEV,        EISDIR,
                                   ENOTDIR, EINVAL, EPERM,  EACCES,    EBADF,        EWOULDBLOCK,
                                   EROFS,   EDQUOT, EMFILE, ENFILE,    ENAMETOOLONG, EIO};
  const std::string& m = s.message();
  for (int err : kKnown) {
    std::string suffix = std::string(": ") + std::strerror(err);
    if (m.size() >= suffix.size() &&
        m.compare(m.size() - suffix.size(), suffix.size(), suffix) == 0) {
      return err;
    }
  }
  return EIO;
}

}  // namespace archil::io
