#include "proto/wire_status.h"

#include <cerrno>

namespace archil::proto {
namespace {

struct Row {
  WireStatus status;
  std::string_view name;
  int err;  // what an application sees on a mounted disk
};

constexpr Row kTable[] = {
    {WireStatus::kOk, "OK", 0},
    {WireStatus::kNotFound, "NOT_FOUND", ENOENT},
    {WireStatus::kExists, "EXISTS", EEXIST},
    {WireStatus::kNotDir, "NOT_DIR", ENOTDIR},
    {WireStatus::kIsDir, "IS_DIR", EISDIR},
    {WireStatus::kNotEmpty, "NOT_EMPTY", ENOTEMPTY},
    {WireStatus::kInvalid, "INVALID", EINVAL},
    {WireStatus::kNameTooLong, "NAME_TOO_LONG", ENAMETOOLONG},
    {WireStatus::kNoSpace, "NO_SPACE", ENOSPC},
    {WireStatus::kFileTooBig, "FILE_TOO_BIG", EFBIG},
    {WireStatus::kTooManyLinks, "TOO_MANY_LINKS", EMLINK},
    {WireStatus::kNoData, "NO_DATA", ENODATA},
    {WireStatus::kRange, "RANGE", ERANGE},
    {WireStatus::kTooBig, "TOO_BIG", E2BIG},
    {WireStatus::kNotSupported, "NOT_SUPPORTED", EOPNOTSUPP},
    {WireStatus::kNotPermitted, "NOT_PERMITTED", EPERM},
    {WireStatus::kAccessDenied, "ACCESS_DENIED", EACCES},
    {WireStatus::kReadOnly, "READ_ONLY", EROFS},
    {WireStatus::kWouldBlock, "WOULD_BLOCK", EAGAIN},
    {WireStatus::kDeadlock, "DEADLOCK", EDEADLK},
    {WireStatus::kStale, "STALE", ESTALE},
    {WireStatus::kBusy, "BUSY", EBUSY},
    {WireStatus::kNoLocks, "NO_LOCKS", ENOLCK},
    {WireStatus::kIo, "IO", EIO},
    {WireStatus::kNoSuchOffset, "NO_SUCH_OFFSET", ENXIO},
    {WireStatus::kInterrupted, "INTERRUPTED", EINTR},
    {WireStatus::kOverflow, "OVERFLOW", EOVERFLOW},
    {WireStatus::kIllegalSeek, "ILLEGAL_SEEK", ESPIPE},
    {WireStatus::kNoDevice, "NO_DEVICE", ENODEV},
    {WireStatus::kBadHandle, "BAD_HANDLE", EBADF},
    {WireStatus::kBadFrame, "BAD_FRAME", EIO},
    {WireStatus::kUnsupportedVersion, "UNSUPPORTED_VERSION", EPROTONOSUPPORT},
    {WireStatus::kUnsupportedType, "UNSUPPORTED_TYPE", EOPNOTSUPP},
    {WireStatus::kBadMessage, "BAD_MESSAGE", EIO},
    {WireStatus::kProtocolState, "PROTOCOL_STATE", EIO},
    {WireStatus::kLimitExceeded, "LIMIT_EXCEEDED", EIO},
    {WireStatus::kAuthFailed, "AUTH_FAILED", EIO},
    {WireStatus::kAuthRateLimited, "AUTH_RATE_LIMITED", EAGAIN},
    {WireStatus::kDiskNotFound, "DISK_NOT_FOUND", ENOENT},
    {WireStatus::kWrongServer, "WRONG_SERVER", EIO},
    {WireStatus::kClientIdInUse, "CLIENT_ID_IN_USE", EBUSY},
    {WireStatus::kSessionUnknown, "SESSION_UNKNOWN", EIO},
    {WireStatus::kSessionExpired, "SESSION_EXPIRED", EIO},
    {WireStatus::kSeqMisordered, "SEQ_MISORDERED", EIO},
    {WireStatus::kSlotInvalid, "SLOT_INVALID", EIO},
    {WireStatus::kGrace, "GRACE", EIO},
    {WireStatus::kReclaimRefused, "RECLAIM_REFUSED", EIO},
    {WireStatus::kDelay, "DELAY", EIO},
    {WireStatus::kShuttingDown, "SHUTTING_DOWN", EIO},
    {WireStatus::kStaleGeneration, "STALE_GENERATION", EIO},
    {WireStatus::kNotOwner, "NOT_OWNER", EROFS},
    {WireStatus::kDelegConflict, "DELEG_CONFLICT", EBUSY},
    {WireStatus::kChecksumMismatch, "CHECKSUM_MISMATCH", EIO},
    {WireStatus::kInternal, "INTERNAL", EIO},
};

const Row* Find(uint16_t value) {
  for (const Row& r : kTable) {
    if (static_cast<uint16_t>(r.status) == value) return &r;
  }
  return nullptr;
}

}  // namespace

bool IsKnownWireStatus(uint16_t value) { return Find(value) != nullptr; }

std::string_view WireStatusName(WireStatus status) {
  const Row* r = Find(static_cast<uint16_t>(status));
  return r ? r->name : "UNKNOWN";
}

int ErrnoForWire(WireStatus status) {
  const Row* r = Find(static_cast<uint16_t>(status));
  return r ? r->err : EIO;
}

WireStatus WireStatusForErrno(int err) {
  if (err == 0) return WireStatus::kOk;
  if (err == EWOULDBLOCK) err = EAGAIN;
  // The file-system rows only (codes below 100): protocol statuses are never an engine's answer.
  for (const Row& r : kTable) {
    if (static_cast<uint16_t>(r.status) < 100 && r.err == err) return r.status;
  }
  return WireStatus::kIo;
}

}  // namespace archil::proto
