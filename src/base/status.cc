#include "base/status.h"

#include <cerrno>
#include <system_error>

namespace archil {
namespace {

struct CodeInfo {
  Status::Code code;
  std::string_view name;  // stable: clients and scripts match on it
  int http;
  int exit;
  int err;  // default errno at the file-system edge
};

// The one table. Adding a Code without a row fails to compile (the static_assert below), and
// rows must be in enum order (checked by status_test).
constexpr CodeInfo kCodes[] = {
    {Status::Code::kOk, "ok", 200, 0, 0},
    {Status::Code::kInvalidArgument, "invalid_argument", 400, 2, EINVAL},
    {Status::Code::kUnauthenticated, "unauthenticated", 401, 3, EACCES},
    {Status::Code::kPermissionDenied, "permission_denied", 403, 3, EACCES},
    {Status::Code::kNotFound, "not_found", 404, 4, ENOENT},
    {Status::Code::kAlreadyExists, "conflict", 409, 5, EEXIST},
    {Status::Code::kFailedPrecondition, "failed_precondition", 409, 5, EPERM},
    {Status::Code::kBusy, "busy", 409, 5, EBUSY},
    {Status::Code::kTooLarge, "too_large", 413, 2, EFBIG},
    {Status::Code::kNoSpace, "no_space", 507, 1, ENOSPC},
    {Status::Code::kStale, "stale", 410, 4, ESTALE},
    {Status::Code::kUnavailable, "unavailable", 503, 6, EIO},
    {Status::Code::kIoError, "io_error", 500, 1, EIO},
    {Status::Code::kCorruption, "corruption", 500, 1, EIO},
    {Status::Code::kInternal, "internal", 500, 1, EIO},
};
static_assert(std::size(kCodes) == Status::kNumCodes, "one row per Status::Code");

constexpr bool RowsInEnumOrder() {
  for (int i = 0; i < Status::kNumCodes; ++i) {
    if (static_cast<int>(kCodes[i].code) != i) return false;
  }
  return true;
}
static_assert(RowsInEnumOrder(), "kCodes rows must follow Status::Code order");

const CodeInfo& Info(Status::Code code) {
  int i = static_cast<int>(code);
  return i >= 0 && i < Status::kNumCodes ? kCodes[i] : kCodes[Status::kNumCodes - 1];
}

}  // namespace

Status::Code CodeForErrno(int err) {
  switch (err) {
    case 0:
      return Status::Code::kInternal;  // a caller bug: no error to report
    case ENOENT:
    case ENODATA:
    case ENXIO:
      return Status::Code::kNotFound;
    case EEXIST:
      return Status::Code::kAlreadyExists;
    case ENOSPC:
    case EDQUOT:
      return Status::Code::kNoSpace;
    case ESTALE:
      return Status::Code::kStale;
    case EACCES:
    case EPERM:
    case EROFS:
      return Status::Code::kPermissionDenied;
    case EINVAL:
    case EBADF:
    case EOPNOTSUPP:
    case ENOSYS:
      return Status::Code::kInvalidArgument;
    case EFBIG:
    case E2BIG:
    case ENAMETOOLONG:
    case EMSGSIZE:
    case ERANGE:
    case EOVERFLOW:
    case EMLINK:
      return Status::Code::kTooLarge;
    case ENOTEMPTY:
    case ENOTDIR:
    case EISDIR:
    case ELOOP:
    case EXDEV:
      return Status::Code::kFailedPrecondition;
    case EBUSY:
    case ETXTBSY:
    case EWOULDBLOCK:
      return Status::Code::kBusy;
    case EINTR:
    case ETIMEDOUT:
    case ECONNREFUSED:
    case ECONNRESET:
    case ECONNABORTED:
    case EPIPE:
    case ENOTCONN:
    case EHOSTUNREACH:
    case ENETUNREACH:
    case ENETDOWN:
      return Status::Code::kUnavailable;
    case EBADMSG:
    case EUCLEAN:
      return Status::Code::kCorruption;
    default:
      return Status::Code::kIoError;
  }
}

Status Status::FromErrno(int err, std::string_view what) {
  return Errno(err, std::string(what) + ": " + std::generic_category().message(err));
}

Status Status::Errno(int err, std::string message) {
  if (err <= 0) return Status(Code::kInternal, std::move(message) + " (no errno)");
  return Status(CodeForErrno(err), std::move(message), err);
}

Status Status::WithContext(std::string_view context) const {
  if (ok()) return *this;
  return Status(code_, std::string(context) + ": " + message_, errno_);
}

std::string_view CodeName(Status::Code code) { return Info(code).name; }
int HttpStatusFor(Status::Code code) { return Info(code).http; }
int ExitCodeFor(Status::Code code) { return Info(code).exit; }

int ErrnoFor(const Status& status) {
  if (status.ok()) return 0;
  return status.sys_errno() != 0 ? status.sys_errno() : Info(status.code()).err;
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  std::string s(CodeName(code_));
  for (char& c : s) c = static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
  return s + ": " + message_;
}

}  // namespace archil
