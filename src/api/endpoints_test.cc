#include "api/endpoints.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace archil {
namespace {

namespace fs = std::filesystem;

class EndpointsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("archil-region-" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "run");
    opts_.run_dir = (dir_ / "run").string();
    opts_.regions_file = (dir_ / "regions.json").string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  void WriteFile(const fs::path& p, const std::string& text) { std::ofstream(p) << text; }
  // What a running server of this process writes.
  void Advertise(const Endpoints& e) {
    WriteFile(AdvertisementPath(opts_.run_dir, e.region), AdvertisementJson(e, getpid()));
  }

  fs::path dir_;
  ResolveOptions opts_;
};

TEST_F(EndpointsTest, ExplicitEndpointWins) {
  opts_.endpoint = "http://10.0.0.1:9/";
  opts_.region = "anything";
  Result<Endpoints> e = ResolveEndpoints(opts_);
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(e->api_url, "http://10.0.0.1:9");
}

TEST_F(EndpointsTest, RejectsEndpointWithoutScheme) {
  opts_.endpoint = "10.0.0.1:9";
  EXPECT_EQ(ResolveEndpoints(opts_).status().code(), Status::Code::kInvalidArgument);
}

TEST_F(EndpointsTest, RegionsFileThenLocalServers) {
  WriteFile(opts_.regions_file,
            R"({"regions": {"eu-1": {"api": "https://eu.example:443", "mount": "eu:1"}}})");
  opts_.region = "eu-1";
  Result<Endpoints> e = ResolveEndpoints(opts_);
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(e->api_url, "https://eu.example:443");
  EXPECT_EQ(e->mount_addr, "eu:1");

  Advertise({"local", "http://127.0.0.1:5", "", ""});
  opts_.region = "local";
  e = ResolveEndpoints(opts_);
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(e->api_url, "http://127.0.0.1:5");
}

TEST_F(EndpointsTest, SingleLocalServerNeedsNoRegion) {
  Advertise({"solo", "http://127.0.0.1:7", "", ""});
  Result<Endpoints> e = ResolveEndpoints(opts_);
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(e->region, "solo");
  Advertise({"duo", "http://127.0.0.1:8", "", ""});
  e = ResolveEndpoints(opts_);
  EXPECT_EQ(e.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(e.status().message().find("--region"), std::string::npos);
}

TEST_F(EndpointsTest, IgnoresStaleAndGarbageAdvertisements) {
  WriteFile(dir_ / "run" / "dead.json", R"({"region":"dead","api":"http://x:1","pid":999999999})");
  WriteFile(dir_ / "run" / "junk.json", "{not json");
  WriteFile(dir_ / "run" / "types.json", R"({"region":1,"api":[],"pid":"x"})");
  Result<Endpoints> e = ResolveEndpoints(opts_);
  EXPECT_EQ(e.status().code(), Status::Code::kNotFound);
  EXPECT_NE(e.status().message().find("archil server"), std::string::npos);
}

// An advertisement that someone other than root or the caller owns or may write is not trusted:
// it could point the CLI at any server and name any file as the admin key.
TEST_F(EndpointsTest, IgnoresAdvertisementsOthersMayWrite) {
  Endpoints e{"local", "http://127.0.0.1:8420", "127.0.0.1:8421", ""};
  Advertise(e);
  const std::string path = AdvertisementPath(opts_.run_dir, "local");
  fs::permissions(path, fs::perms(0644));
  ASSERT_TRUE(ResolveEndpoints(opts_).ok());
  fs::permissions(path, fs::perms(0666));
  EXPECT_EQ(ResolveEndpoints(opts_).status().code(), Status::Code::kNotFound);
  fs::permissions(path, fs::perms(0644));
  fs::create_symlink(path, dir_ / "run" / "other.json");  // a symlink is not followed
  fs::rename(path, dir_ / "real.json");
  fs::rename(dir_ / "run" / "other.json", path);
  EXPECT_EQ(ResolveEndpoints(opts_).status().code(), Status::Code::kNotFound);
}

TEST_F(EndpointsTest, AdminKeyFileMustBePrivate) {
  const fs::path key = dir_ / "admin-api-key";
  WriteFile(key, "key-abc\nsecond line\n");
  fs::permissions(key, fs::perms(0600));
  Result<std::string> k = ReadAdminKeyFile(key.string());
  ASSERT_TRUE(k.ok()) << k.status().ToString();
  EXPECT_EQ(*k, "key-abc");
  fs::permissions(key, fs::perms(0640));
  EXPECT_EQ(ReadAdminKeyFile(key.string()).status().code(), Status::Code::kPermissionDenied);
  EXPECT_NE(ReadAdminKeyFile(key.string()).status().message().find("0640"), std::string::npos);
  fs::permissions(key, fs::perms(0600));
  fs::create_symlink(key, dir_ / "link");
  EXPECT_FALSE(ReadAdminKeyFile((dir_ / "link").string()).ok());
  EXPECT_FALSE(ReadAdminKeyFile("/etc").ok());
  if (geteuid() == 0) {
    ASSERT_EQ(chown(key.c_str(), 4242, 4242), 0);
    Result<std::string> theirs = ReadAdminKeyFile(key.string());
    EXPECT_EQ(theirs.status().code(), Status::Code::kPermissionDenied);
    EXPECT_NE(theirs.status().message().find("uid 4242"), std::string::npos);
  }
}

TEST_F(EndpointsTest, UnknownRegionSaysWhatToDo) {
  opts_.region = "nowhere";
  Result<Endpoints> e = ResolveEndpoints(opts_);
  EXPECT_EQ(e.status().code(), Status::Code::kNotFound);
  EXPECT_NE(e.status().message().find("--endpoint"), std::string::npos);
  opts_.region = "Bad Region";
  EXPECT_EQ(ResolveEndpoints(opts_).status().code(), Status::Code::kInvalidArgument);
}

TEST_F(EndpointsTest, ExplicitRegionsFileMustExistAndParse) {
  opts_.region = "r";
  opts_.regions_file_explicit = true;
  EXPECT_EQ(ResolveEndpoints(opts_).status().code(), Status::Code::kInvalidArgument);
  WriteFile(opts_.regions_file, "[1,2]");
  EXPECT_EQ(ResolveEndpoints(opts_).status().code(), Status::Code::kInvalidArgument);
}

TEST_F(EndpointsTest, RemoveAdvertisementOnlyRemovesOwn) {
  Advertise({"r1", "http://127.0.0.1:7", "", ""});
  RemoveAdvertisement(opts_.run_dir, "r1", getpid() + 1);
  EXPECT_TRUE(fs::exists(dir_ / "run" / "r1.json"));
  RemoveAdvertisement(opts_.run_dir, "r1", getpid());
  EXPECT_FALSE(fs::exists(dir_ / "run" / "r1.json"));
}

}  // namespace
}  // namespace archil
