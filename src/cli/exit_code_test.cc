#include "cli/exit_code.h"

#include <gtest/gtest.h>

#include "cli/api_client.h"

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

TEST(ExitCodeTest, HttpStatusesMapBack) {
  EXPECT_EQ(CodeForHttpStatus(200), Status::Code::kOk);
  EXPECT_EQ(CodeForHttpStatus(409), Status::Code::kAlreadyExists);
  EXPECT_EQ(CodeForHttpStatus(413), Status::Code::kTooLarge);
  EXPECT_EQ(CodeForHttpStatus(503), Status::Code::kUnavailable);
  EXPECT_EQ(CodeForHttpStatus(500), Status::Code::kInternal);
}

}  // namespace
}  // namespace archil
