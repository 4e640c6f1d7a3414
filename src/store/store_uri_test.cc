#include "store/store_uri.h"

#include <gtest/gtest.h>

#include <map>

#include "store/map_env_test_util.h"

namespace archil::store {
namespace {

TEST(StoreUri, Dir) {
  Result<StoreUri> u = ParseStoreUri("dir:///var/lib/archil/objects", MapEnv({}));
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->kind, StoreUri::Kind::kDir);
  EXPECT_EQ(u->path, "/var/lib/archil/objects");
  EXPECT_FALSE(ParseStoreUri("dir://relative", MapEnv({})).ok());
}

TEST(StoreUri, S3WithEndpointIsPathStyle) {
  Result<StoreUri> u = ParseStoreUri(
      "s3://my-bucket/team/a/?endpoint=http%3A%2F%2F127.0.0.1:9000/&region=eu-west-1", MapEnv({}));
  ASSERT_TRUE(u.ok()) << u.status().ToString();
  EXPECT_EQ(u->kind, StoreUri::Kind::kS3);
  EXPECT_EQ(u->s3.bucket, "my-bucket");
  EXPECT_EQ(u->s3.prefix, "team/a/");
  EXPECT_EQ(u->s3.endpoint, "http://127.0.0.1:9000");
  EXPECT_EQ(u->s3.region, "eu-west-1");
  EXPECT_FALSE(u->s3.virtual_hosted);
}

TEST(StoreUri, S3DefaultsToAwsVirtualHosted) {
  Result<StoreUri> u = ParseStoreUri("s3://bucket", MapEnv({{"AWS_REGION", "us-west-2"}}));
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->s3.endpoint, "https://s3.us-west-2.amazonaws.com");
  EXPECT_TRUE(u->s3.virtual_hosted);
  EXPECT_EQ(u->s3.prefix, "");
  EXPECT_EQ(ParseStoreUri("s3://bucket", MapEnv({}))->s3.region, "us-east-1");
  EXPECT_EQ(ParseStoreUri("s3://bucket", MapEnv({{"AWS_DEFAULT_REGION", "ap-south-1"}}))->s3.region,
            "ap-south-1");
}

TEST(StoreUri, PayloadSigningIsChosenByTheEndpointsSchemeUnlessGiven) {
  using Payload = S3Config::Payload;
  EXPECT_EQ(ParseStoreUri("s3://bucket", MapEnv({}))->s3.payload, Payload::kAuto);
  EXPECT_EQ(ParseStoreUri("s3://bucket?payload=signed", MapEnv({}))->s3.payload, Payload::kSigned);
  EXPECT_EQ(
      ParseStoreUri("s3://bucket?endpoint=http://h:9000&payload=unsigned", MapEnv({}))->s3.payload,
      Payload::kUnsigned);
}

TEST(StoreUri, BadUrisSayWhy) {
  for (const char* bad :
       {"s3://", "s3://UPPER", "s3://ab", "s3://-bucket", "s3://b_ucket", "s3://bucket?x=1",
        "s3://bucket?endpoint=", "s3://bucket?endpoint", "s3://bucket?endpoint=ftp://h",
        "s3://bucket?endpoint=http://h/path", "s3://bucket?addressing=sideways", "s3://bucket/a//b",
        "s3://bucket?payload=", "s3://bucket?payload=none", "s3://bucket?payload=UNSIGNED",
        "s3://bucket/../x", "gs://bucket", "", "/plain/path"}) {
    Result<StoreUri> u = ParseStoreUri(bad, MapEnv({}));
    EXPECT_EQ(u.status().code(), Status::Code::kInvalidArgument) << bad;
    EXPECT_FALSE(u.status().message().empty());
  }
}

TEST(StoreUri, OpeningS3WithoutCredentialsSaysSoBeforeAnyRequest) {
  Result<std::unique_ptr<ObjectStore>> s = OpenObjectStore(
      "s3://bucket?endpoint=http://127.0.0.1:1", MapEnv({{"HOME", "/nonexistent"}}));
  ASSERT_EQ(s.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(s.status().message().find("AWS_ACCESS_KEY_ID"), std::string::npos);
}

TEST(StoreUri, OpeningAnUnreachableS3StoreIsUnavailable) {
  // Port 1 on loopback refuses at once; the probe's retries give up within the policy.
  StoreUri u = *ParseStoreUri("s3://bucket?endpoint=http://127.0.0.1:1", MapEnv({}));
  u.s3.credentials = {"AK", "SK", ""};
  u.s3.retry.max_attempts = 2;
  Result<std::unique_ptr<S3Store>> s = S3Store::Open(u.s3);
  EXPECT_EQ(s.status().code(), Status::Code::kUnavailable) << s.status().ToString();
}

}  // namespace
}  // namespace archil::store
