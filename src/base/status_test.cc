#include "base/status.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <set>
#include <system_error>

namespace archil {
namespace {

Result<int> Half(int x) {
  if (x % 2 != 0) return Status::InvalidArgument("odd");
  return x / 2;
}

Result<int> Quarter(int x) {
  ARCHIL_ASSIGN_OR_RETURN(int h, Half(x));
  ARCHIL_ASSIGN_OR_RETURN(int q, Half(h));
  return q;
}

Status CheckEven(int x) {
  ARCHIL_RETURN_IF_ERROR(Half(x).status());
  return Status::Ok();
}

TEST(StatusTest, OkByDefault) {
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.ToString(), "OK");
}

TEST(StatusTest, CarriesCodeMessageAndContext) {
  Status s = Status::NotFound("disk dsk-1").WithContext("get");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Status::Code::kNotFound);
  EXPECT_EQ(s.message(), "get: disk dsk-1");
  EXPECT_EQ(s.ToString(), "NOT_FOUND: get: disk dsk-1");
  EXPECT_TRUE(Status::Ok().WithContext("x").ok());
}

TEST(StatusTest, FromErrnoNamesTheCallAndKeepsTheErrno) {
  Status s = Status::FromErrno(ENOENT, "open /x");
  EXPECT_EQ(s.code(), Status::Code::kNotFound);
  EXPECT_EQ(s.sys_errno(), ENOENT);
  EXPECT_EQ(s.message(), "open /x: No such file or directory");
  // Context keeps the errno.
  EXPECT_EQ(ErrnoFor(s.WithContext("mount")), ENOENT);
}

TEST(StatusTest, ErrnosSurviveAsCodes) {
  struct Case {
    int err;
    Status::Code code;
  };
  for (Case c :
       {Case{ENOSPC, Status::Code::kNoSpace}, Case{EDQUOT, Status::Code::kNoSpace},
        Case{ENOENT, Status::Code::kNotFound}, Case{EEXIST, Status::Code::kAlreadyExists},
        Case{ESTALE, Status::Code::kStale}, Case{EACCES, Status::Code::kPermissionDenied},
        Case{ENOTEMPTY, Status::Code::kFailedPrecondition}, Case{EBUSY, Status::Code::kBusy},
        Case{EIO, Status::Code::kIoError}, Case{ECONNREFUSED, Status::Code::kUnavailable},
        Case{ENAMETOOLONG, Status::Code::kTooLarge}}) {
    Status s = Status::Errno(c.err, "x");
    EXPECT_EQ(s.code(), c.code) << std::generic_category().message(c.err);
    // The exact errno reaches the file-system edge, not the code's default.
    EXPECT_EQ(ErrnoFor(s), c.err) << std::generic_category().message(c.err);
  }
  // Without a kept errno, the code's default.
  EXPECT_EQ(ErrnoFor(Status::NotFound("x")), ENOENT);
  EXPECT_EQ(ErrnoFor(Status::Corruption("x")), EIO);
  EXPECT_EQ(ErrnoFor(Status::Ok()), 0);
  // Errno(0) is a caller bug, reported as such rather than as success.
  EXPECT_EQ(Status::Errno(0, "x").code(), Status::Code::kInternal);
}

TEST(StatusTest, CodeNamesAreStable) {
  EXPECT_EQ(CodeName(Status::Code::kInvalidArgument), "invalid_argument");
  EXPECT_EQ(CodeName(Status::Code::kAlreadyExists), "conflict");
  EXPECT_EQ(CodeName(Status::Code::kTooLarge), "too_large");
  EXPECT_EQ(CodeName(Status::Code::kNoSpace), "no_space");
}

// Every code has its own name, and the edges' mappings agree with their documented tables
// (docs/api.md, docs/cli.md).
TEST(StatusTest, OneTableForNamesHttpAndExitCodes) {
  std::set<std::string_view> names;
  for (int i = 0; i < Status::kNumCodes; ++i) {
    auto code = static_cast<Status::Code>(i);
    EXPECT_TRUE(names.insert(CodeName(code)).second) << CodeName(code);
    int http = HttpStatusFor(code);
    EXPECT_TRUE(code == Status::Code::kOk ? http == 200 : http >= 400 && http < 600);
    EXPECT_EQ(ExitCodeFor(code) == 0, code == Status::Code::kOk);
  }
  EXPECT_EQ(HttpStatusFor(Status::Code::kUnauthenticated), 401);
  EXPECT_EQ(HttpStatusFor(Status::Code::kAlreadyExists), 409);
  EXPECT_EQ(HttpStatusFor(Status::Code::kBusy), 409);
  EXPECT_EQ(HttpStatusFor(Status::Code::kUnavailable), 503);
  EXPECT_EQ(HttpStatusFor(Status::Code::kInternal), 500);
  EXPECT_EQ(ExitCodeFor(Status::Code::kInvalidArgument), 2);
  EXPECT_EQ(ExitCodeFor(Status::Code::kPermissionDenied), 3);
  EXPECT_EQ(ExitCodeFor(Status::Code::kNotFound), 4);
  EXPECT_EQ(ExitCodeFor(Status::Code::kBusy), 5);
  EXPECT_EQ(ExitCodeFor(Status::Code::kUnavailable), 6);
  EXPECT_EQ(ExitCodeFor(Status::Code::kCorruption), 1);
}

TEST(ResultTest, MacrosPropagate) {
  EXPECT_EQ(*Quarter(8), 2);
  Result<int> r = Quarter(6);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "odd");
  EXPECT_TRUE(CheckEven(4).ok());
  EXPECT_EQ(CheckEven(3).code(), Status::Code::kInvalidArgument);
}

TEST(ResultTest, HoldsMoveOnlyValues) {
  Result<std::unique_ptr<int>> r = std::make_unique<int>(7);
  ASSERT_TRUE(r.ok());
  std::unique_ptr<int> p = std::move(r).value();
  EXPECT_EQ(*p, 7);
}

TEST(ResultTest, ConvertsToAResultOfABaseType) {
  struct Base {
    virtual ~Base() = default;
    virtual int Id() const { return 1; }
  };
  struct Derived : Base {
    int Id() const override { return 2; }
  };
  Derived d;
  Result<Base*> held = Result<Derived*>(&d);
  ASSERT_TRUE(held.ok());
  EXPECT_EQ((*held)->Id(), 2);
  Result<Base*> failed = Result<Derived*>(Status::NotFound("no such thing"));
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().code(), Status::Code::kNotFound);
  EXPECT_EQ(failed.status().message(), "no such thing");
  Result<std::shared_ptr<Base>> shared =
      Result<std::shared_ptr<Derived>>(std::make_shared<Derived>());
  ASSERT_TRUE(shared.ok());
  EXPECT_EQ((*shared)->Id(), 2);
}

}  // namespace
}  // namespace archil
