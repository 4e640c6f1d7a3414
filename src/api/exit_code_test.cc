#include "api/exit_code.h"

#include <gtest/gtest.h>

namespace archil {
namespace {

TEST(ExitCodeTest, OneCodePerKindOfFailure) {
  EXPECT_EQ(ExitCodeFor(Status::Code::kOk), 0);
  EXPECT_EQ(ExitCodeFor(Status::Code::kInvalidArgument), 2);
  EXPECT_EQ(ExitCodeFor(Status::Code::kUnauthenticated), 3);
  EXPECT_EQ(ExitCodeFor(Status::Code::kPermissionDenied), 3);
  EXPECT_EQ(ExitCodeFor(Status::Code::kNotFound), 4);
  EXPECT_EQ(ExitCodeFor(Status::Code::kAlreadyExists), 5);
  EXPECT_EQ(ExitCodeFor(Status::Code::kUnavailable), 6);
  EXPECT_EQ(ExitCodeFor(Status::Code::kInternal), 1);
}

TEST(ExitCodeTest, ErrorLinesSayWhatToDo) {
  EXPECT_NE(ErrorLine(Status::Unauthenticated("no API key")).find("ARCHIL_API_KEY"),
            std::string::npos);
  EXPECT_NE(ErrorLine(Status::Unavailable("cannot connect")).find("--endpoint"), std::string::npos);
  EXPECT_EQ(ErrorLine(Status::NotFound("no disk named 'x'")), "archil: no disk named 'x'");
}

}  // namespace
}  // namespace archil
