// WireStatus: the status of a reply on the disk protocol (the frame header's u16, docs/protocol.md
// §13), and its one mapping to and from errno. The server turns an engine error into a status with
// WireStatusForErrno(ErrnoFor(status)); the client turns a status into the errno the kernel sees
// with ErrnoForWire. Both read the same table (wire_status.cc), so one condition never becomes two
// errnos.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string_view>

namespace archil::proto {

enum class WireStatus : uint16_t {
  kOk = 0,
  // File-system errors: each is one errno.
  kNotFound = 1,       // ENOENT
  kExists = 2,         // EEXIST
  kNotDir = 3,         // ENOTDIR
  kIsDir = 4,          // EISDIR
  kNotEmpty = 5,       // ENOTEMPTY
  kInvalid = 6,        // EINVAL
  kNameTooLong = 7,    // ENAMETOOLONG
  kNoSpace = 8,        // ENOSPC
  kFileTooBig = 9,     // EFBIG
  kTooManyLinks = 10,  // EMLINK
  kNoData = 11,        // ENODATA
  kRange = 12,         // ERANGE
  kTooBig = 13,        // E2BIG
  kNotSupported = 14,  // EOPNOTSUPP
  kNotPermitted = 15,  // EPERM
  kAccessDenied = 16,  // EACCES
  kReadOnly = 17,      // EROFS
  kWouldBlock = 18,    // EAGAIN
  kDeadlock = 19,      // EDEADLK
  kStale = 20,         // ESTALE
  kBusy = 21,          // EBUSY
  kNoLocks = 22,       // ENOLCK
  kIo = 23,            // EIO
  kNoSuchOffset = 24,  // ENXIO
  kInterrupted = 25,   // EINTR
  kOverflow = 26,      // EOVERFLOW
  kIllegalSeek = 27,   // ESPIPE (fallocate of a FIFO)
  kNoDevice = 28,      // ENODEV (fallocate of a device node)
  kBadHandle = 29,     // EBADF
  // Protocol errors.
  kBadFrame = 100,
  kUnsupportedVersion = 101,
  kUnsupportedType = 102,
  kBadMessage = 103,
  kProtocolState = 104,
  kLimitExceeded = 105,
  kAuthFailed = 110,
  kAuthRateLimited = 111,
  kDiskNotFound = 112,
  kWrongServer = 113,
  kClientIdInUse = 114,
  kSessionUnknown = 120,
  kSessionExpired = 121,
  kSeqMisordered = 122,
  kSlotInvalid = 123,
  kGrace = 130,
  kReclaimRefused = 131,
  kDelay = 132,
  kShuttingDown = 133,
  kStaleGeneration = 140,
  kNotOwner = 141,
  kDelegConflict = 142,
  kChecksumMismatch = 150,
  kInternal = 151,
};

// True for the values above; a header carrying any other value is a bad frame.
bool IsKnownWireStatus(uint16_t value);
// The name in protocol.md §13 ("NOT_FOUND"); "UNKNOWN" for other values.
std::string_view WireStatusName(WireStatus status);
// The errno an application sees for this status on a mounted disk (protocol.md §13): 0 for OK,
// the status's errno for file-system errors, EIO for protocol errors the client cannot handle
// itself, EROFS for NOT_OWNER, EBUSY for DELEG_CONFLICT. Never ENOSYS.
int ErrnoForWire(WireStatus status);
// The status that carries `err` (from ErrnoFor of an engine Status): the file-system status with
// that errno, kIo for an errno the table does not have. 0 gives kOk.
WireStatus WireStatusForErrno(int err);

}  // namespace archil::proto
