#include "proto/wire_status.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <vector>

namespace archil::proto {
namespace {

// Every value the table knows, found by scanning the whole u16 range.
std::vector<WireStatus> AllStatuses() {
  std::vector<WireStatus> out;
  for (uint32_t v = 0; v <= 0xffff; ++v) {
    if (IsKnownWireStatus(static_cast<uint16_t>(v))) out.push_back(static_cast<WireStatus>(v));
  }
  return out;
}

TEST(WireStatus, FileSystemStatusesRoundTripThroughErrno) {
  int fs_statuses = 0;
  for (WireStatus s : AllStatuses()) {
    if (static_cast<uint16_t>(s) >= 100) continue;
    ++fs_statuses;
    EXPECT_EQ(WireStatusForErrno(ErrnoForWire(s)), s) << WireStatusName(s);
  }
  EXPECT_EQ(fs_statuses, 30);
}

// Every errno the engine and ModelFs return (grep "Errno(E" src/engine src/posix) has a status
// that carries it unchanged.
TEST(WireStatus, EveryEngineErrnoHasItsOwnStatus) {
  for (int err :
       {EINVAL,    EISDIR,       ENOENT, EEXIST, ENOTDIR, ENOSPC, ENODATA, EFBIG,  EOPNOTSUPP,
        ENOTEMPTY, ENAMETOOLONG, ESPIPE, EPERM,  ENODEV,  E2BIG,  EROFS,   ERANGE, EOVERFLOW,
        EIO,       EBADF,        EACCES, EMLINK, ESTALE,  EBUSY,  EAGAIN}) {
    WireStatus s = WireStatusForErrno(err);
    EXPECT_EQ(ErrnoForWire(s), err) << "errno " << err << " became " << WireStatusName(s);
  }
}

TEST(WireStatus, UnknownErrnosAreIoAndNothingIsEnosys) {
  EXPECT_EQ(WireStatusForErrno(0), WireStatus::kOk);
  EXPECT_EQ(WireStatusForErrno(EXDEV), WireStatus::kIo);
  EXPECT_EQ(WireStatusForErrno(EWOULDBLOCK), WireStatus::kWouldBlock);
  for (WireStatus s : AllStatuses()) {
    EXPECT_NE(ErrnoForWire(s), ENOSYS) << WireStatusName(s);
    EXPECT_NE(WireStatusName(s), "UNKNOWN");
    EXPECT_EQ(ErrnoForWire(s) == 0, s == WireStatus::kOk) << WireStatusName(s);
  }
  EXPECT_EQ(ErrnoForWire(static_cast<WireStatus>(99)), EIO);
  EXPECT_EQ(WireStatusName(static_cast<WireStatus>(99)), "UNKNOWN");
  EXPECT_EQ(ErrnoForWire(WireStatus::kNotOwner), EROFS);
  EXPECT_EQ(ErrnoForWire(WireStatus::kDelegConflict), EBUSY);
  EXPECT_EQ(WireStatusName(WireStatus::kSeqMisordered), "SEQ_MISORDERED");
}

}  // namespace
}  // namespace archil::proto
