// The catalog's copies in the bucket: stored only when the catalog changed, LATEST names the
// newest, old copies go, and a restore checks what it downloads.
#include "tier/catalog_shipper.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tier/manifest.h"
#include "tier/memory_store_test_util.h"

namespace archil::tier {
namespace {

class CatalogShipperTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/archil-catalog-ship-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  CatalogShipperOptions Options() {
    CatalogShipperOptions o;
    o.store = &mem_;
    o.clock = &clock_;
    o.version = [this] { return version_; };
    // A stand-in for SqliteCatalog::BackupTo: an SQLite header, then the version.
    o.backup = [this](const std::string& path) {
      std::ofstream(path, std::ios::binary)
          << std::string("SQLite format 3\0", 16) << "catalog v" << version_;
      return Status::Ok();
    };
    o.tmp_dir = dir_;
    o.schema = 2;
    o.keep = 2;
    return o;
  }
  size_t Copies() {
    size_t n = 0;
    for (const auto& [key, data] : mem_.objects()) n += key.starts_with("catalog/snap/");
    return n;
  }
  std::string dir_;
  MemoryStore mem_;
  FakeClock clock_;
  uint64_t version_ = 1;
};

TEST_F(CatalogShipperTest, CopiesOnlyChangesKeepsTheNewestAndRestoresTheLatest) {
  EXPECT_EQ(RestoreCatalog(&mem_, dir_ + "/none.sqlite").status().code(), Status::Code::kNotFound);
  CatalogShipper shipper(Options());
  ASSERT_TRUE(shipper.Pass().ok());
  ASSERT_TRUE(shipper.Pass().ok());  // unchanged: nothing stored
  EXPECT_EQ(shipper.stats().copies, 1u);
  EXPECT_FALSE(shipper.Behind()) << "the copy holds every change";
  ++version_;
  EXPECT_TRUE(shipper.Behind()) << "a change no copy holds";
  --version_;
  for (int i = 0; i < 3; ++i) {
    ++version_;
    clock_.Advance(1000);
    ASSERT_TRUE(shipper.Pass().ok()) << shipper.stats().last_error;
  }
  EXPECT_EQ(shipper.stats().copies, 4u);
  EXPECT_EQ(Copies(), 2u);
  Result<CatalogPointer> p = RestoreCatalog(&mem_, dir_ + "/restored.sqlite");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->schema, 2);
  std::ifstream in(dir_ + "/restored.sqlite", std::ios::binary);
  std::string got((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_TRUE(got.ends_with("catalog v4"));
  EXPECT_EQ(RestoreCatalog(&mem_, dir_ + "/restored.sqlite").status().code(),
            Status::Code::kAlreadyExists);
  // A copy that is not what LATEST says is refused, and so is a LATEST that names something else.
  mem_.Set(p->object, "SQLite format 3" + std::string(1, '\0') + "catalog v5");
  EXPECT_EQ(RestoreCatalog(&mem_, dir_ + "/r2.sqlite").status().code(), Status::Code::kCorruption);
  CatalogPointer elsewhere = *p;
  elsewhere.object = "disks/x";
  mem_.Set(kCatalogLatestKey, EncodeCatalogPointer(elsewhere));
  EXPECT_EQ(RestoreCatalog(&mem_, dir_ + "/r3.sqlite").status().code(), Status::Code::kCorruption);
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/r2.sqlite"));
}

TEST_F(CatalogShipperTest, AnOutageFailsThePassAndTheNextOneCopies) {
  CatalogShipper shipper(Options());
  mem_.SetDown(true);
  EXPECT_EQ(shipper.Pass().code(), Status::Code::kUnavailable);
  EXPECT_EQ(shipper.stats().failed_passes, 1u);
  mem_.SetDown(false);
  ASSERT_TRUE(shipper.Pass().ok());
  EXPECT_EQ(shipper.stats().copies, 1u);
  EXPECT_TRUE(RestoreCatalog(&mem_, dir_ + "/r.sqlite").ok());
}

TEST(CatalogPointer, RoundTripsAndRefusesDamage) {
  const CatalogPointer p{"catalog/snap/0001764700000000-00000001.sqlite", 4096, 77, 2};
  const std::string v = EncodeCatalogPointer(p);
  ASSERT_TRUE(DecodeCatalogPointer(v).ok());
  EXPECT_EQ(*DecodeCatalogPointer(v), p);
  for (size_t i = 0; i < v.size(); ++i) {
    std::string bad = v;
    bad[i] ^= 0x04;
    EXPECT_FALSE(DecodeCatalogPointer(bad).ok()) << i;
  }
  EXPECT_FALSE(DecodeCatalogPointer(EncodeEnvelope(EnvelopeKind::kCatalogPointer,
                                                   R"({"format":1,"object":"catalog/snap/x"})"))
                   .ok());
}

}  // namespace
}  // namespace archil::tier
