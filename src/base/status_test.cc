#include "base/status.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <memory>

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

TEST(StatusTest, FromErrnoNamesTheCall) {
  Status s = Status::FromErrno(ENOENT, "open /x");
  EXPECT_EQ(s.code(), Status::Code::kIoError);
  EXPECT_EQ(s.message(), "open /x: No such file or directory");
}

TEST(StatusTest, CodeNamesAreStable) {
  EXPECT_EQ(CodeName(Status::Code::kInvalidArgument), "invalid_argument");
  EXPECT_EQ(CodeName(Status::Code::kAlreadyExists), "conflict");
  EXPECT_EQ(CodeName(Status::Code::kTooLarge), "too_large");
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

}  // namespace
}  // namespace archil
