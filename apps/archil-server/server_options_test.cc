#include <gtest/gtest.h>

#include "server.h"

namespace archil {
namespace {

TEST(ServerOptionsTest, ListenAddresses) {
  auto a = ParseListenAddress("127.0.0.1:8420");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->first, "127.0.0.1");
  EXPECT_EQ(a->second, 8420);
  a = ParseListenAddress("[::1]:0");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->first, "::1");
  for (const char* bad : {"", "8420", "host:", ":80", "h:65536", "h:-1", "::1:80", "[::1]80"}) {
    EXPECT_FALSE(ParseListenAddress(bad).ok()) << bad;
  }
}

TEST(ServerOptionsTest, Loopback) {
  EXPECT_TRUE(IsLoopbackHost("127.0.0.1"));
  EXPECT_TRUE(IsLoopbackHost("127.9.9.9"));
  EXPECT_TRUE(IsLoopbackHost("::1"));
  EXPECT_TRUE(IsLoopbackHost("localhost"));
  EXPECT_FALSE(IsLoopbackHost("0.0.0.0"));
  EXPECT_FALSE(IsLoopbackHost("10.1.2.3"));
  EXPECT_FALSE(IsLoopbackHost("::"));
}

TEST(ServerOptionsTest, RefusesCleartextBeyondLoopback) {
  ServerOptions o;
  o.data_dir = "/tmp/x";
  EXPECT_TRUE(ValidateServerOptions(o).ok());
  o.api_listen = "0.0.0.0:8420";
  Status s = ValidateServerOptions(o);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(s.message().find("--insecure"), std::string::npos);
  o.insecure = true;
  EXPECT_TRUE(ValidateServerOptions(o).ok());
  o.insecure = false;
  o.tls_cert_file = "c.pem";
  o.tls_key_file = "k.pem";
  EXPECT_TRUE(ValidateServerOptions(o).ok());
}

TEST(ServerOptionsTest, RejectsUnsupportedStores) {
  ServerOptions o;
  o.catalog = "postgres://db/archil";
  EXPECT_NE(ValidateServerOptions(o).message().find("PostgreSQL"), std::string::npos);
  o.catalog = "sqlite:///tmp/c.db";
  EXPECT_TRUE(ValidateServerOptions(o).ok());
  o.object_store = "s3://bucket";
  EXPECT_TRUE(ValidateServerOptions(o).ok());  // the tier runs on S3 (it is probed at start)
  o.object_store = "s3://Bad_Bucket";
  EXPECT_NE(ValidateServerOptions(o).message().find("not a valid S3 bucket name"),
            std::string::npos);
  o.object_store = "dir://relative";
  EXPECT_NE(ValidateServerOptions(o).message().find("absolute"), std::string::npos);
  o.object_store = "dir:///tmp/objects";
  EXPECT_TRUE(ValidateServerOptions(o).ok());
  o.object_store.clear();
  o.take_over = true;
  EXPECT_NE(ValidateServerOptions(o).message().find("needs --object-store"), std::string::npos);
  o.take_over = false;
  o.region = "Bad_Region";
  EXPECT_FALSE(ValidateServerOptions(o).ok());
}

}  // namespace
}  // namespace archil
