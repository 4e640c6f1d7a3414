#include "api/exit_code.h"

#include <gtest/gtest.h>

namespace archil {
namespace {

TEST(ExitCodeTest, ErrorLinesSayWhatToDo) {
  EXPECT_NE(ErrorLine(Status::Unauthenticated("no API key")).find("ARCHIL_API_KEY"),
            std::string::npos);
  EXPECT_NE(ErrorLine(Status::Unavailable("cannot connect")).find("--endpoint"), std::string::npos);
  EXPECT_EQ(ErrorLine(Status::NotFound("no disk named 'x'")), "archil: no disk named 'x'");
}

}  // namespace
}  // namespace archil
