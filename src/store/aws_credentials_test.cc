#include "store/aws_credentials.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <map>

#include "store/map_env_test_util.h"

namespace archil::store {
namespace {

TEST(AwsCredentials, EnvironmentComesFirst) {
  Result<AwsCredentials> c =
      LoadAwsCredentials(MapEnv({{"AWS_ACCESS_KEY_ID", "AK"},
                                 {"AWS_SECRET_ACCESS_KEY", "SK"},
                                 {"AWS_SESSION_TOKEN", "T"},
                                 {"AWS_SHARED_CREDENTIALS_FILE", "/nonexistent"}}));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->access_key_id, "AK");
  EXPECT_EQ(c->secret_access_key, "SK");
  EXPECT_EQ(c->session_token, "T");
}

TEST(AwsCredentials, HalfAnEnvironmentIsAnError) {
  Result<AwsCredentials> c = LoadAwsCredentials(MapEnv({{"AWS_ACCESS_KEY_ID", "AK"}}));
  EXPECT_EQ(c.status().code(), Status::Code::kInvalidArgument);
}

TEST(AwsCredentials, SharedFileWithProfile) {
  const std::string path = testing::TempDir() + "/aws-credentials";
  std::ofstream(path) << "# comment\n[default]\naws_access_key_id = D\naws_secret_access_key=DS\n"
                         "\n[ci]\r\n  aws_access_key_id = C \r\naws_secret_access_key = CS\r\n"
                         "; more\naws_session_token = CT\n";
  Result<AwsCredentials> d = LoadAwsCredentials(MapEnv({{"AWS_SHARED_CREDENTIALS_FILE", path}}));
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->access_key_id, "D");
  EXPECT_EQ(d->secret_access_key, "DS");
  Result<AwsCredentials> ci =
      LoadAwsCredentials(MapEnv({{"AWS_SHARED_CREDENTIALS_FILE", path}, {"AWS_PROFILE", "ci"}}));
  ASSERT_TRUE(ci.ok()) << ci.status().ToString();
  EXPECT_EQ(ci->access_key_id, "C");
  EXPECT_EQ(ci->secret_access_key, "CS");
  EXPECT_EQ(ci->session_token, "CT");
  Result<AwsCredentials> none = LoadAwsCredentials(
      MapEnv({{"AWS_SHARED_CREDENTIALS_FILE", path}, {"AWS_PROFILE", "absent"}}));
  EXPECT_EQ(none.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(none.status().message().find("[absent]"), std::string::npos);
  std::remove(path.c_str());
}

TEST(AwsCredentials, NothingAnywhereSaysWhereItLooked) {
  Result<AwsCredentials> c = LoadAwsCredentials(MapEnv({{"HOME", "/nonexistent-home"}}));
  ASSERT_EQ(c.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(c.status().message().find("/nonexistent-home/.aws/credentials"), std::string::npos);
  EXPECT_NE(c.status().message().find("AWS_ACCESS_KEY_ID"), std::string::npos);
}

TEST(AwsCredentials, ProfileWithoutSecretIsRefused) {
  EXPECT_EQ(ParseCredentialsFile("[default]\naws_access_key_id=A\n", "default").status().code(),
            Status::Code::kInvalidArgument);
  EXPECT_EQ(ParseCredentialsFile("[default\n", "default").status().code(),
            Status::Code::kInvalidArgument);
}

}  // namespace
}  // namespace archil::store
