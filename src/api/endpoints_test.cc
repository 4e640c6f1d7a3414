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
