#include "io/status_errno.h"

#include <gtest/gtest.h>

#include <cerrno>

namespace archil::io {
namespace {

TEST(StatusErrno, RecoversTheErrnoFromFromErrno) {
  for (int err : {ENOENT, EEXIST, ENOSPC, ENOTEMPTY, EXDEV, EISDIR, ENOTDIR, EIO, EWOULDBLOCK}) {
    EXPECT_EQ(ErrnoOf(Status::FromErrno(err, "op /x")), err) << err;
  }
}

TEST(StatusErrno, OkIsZeroAndUnknownIsEio) {
  EXPECT_EQ(ErrnoOf(Status::Ok()), 0);
  EXPECT_EQ(ErrnoOf(Status::Internal("something else")), EIO);
  EXPECT_EQ(ErrnoOf(Status::NotFound("x")), ENOENT);
  EXPECT_EQ(ErrnoOf(Status::AlreadyExists("x")), EEXIST);
}

TEST(StatusErrno, ContextInFrontKeepsTheErrno) {
  EXPECT_EQ(ErrnoOf(Status::FromErrno(ENOSPC, "pwrite /f").WithContext("flush")), ENOSPC);
}

}  // namespace
}  // namespace archil::io
