// One contract, three stores: every ObjectStore behaviour a tier relies on, run against DirStore,
// S3Store on the strict fake (tests/s3_fake), and S3Store on s3rver (an independent S3 server from
// npm). A store that ignores conditions (s3rver) skips only the condition checks, and the probe
// must have said so.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "base/random.h"
#include "s3_fake/s3_fake.h"
#include "s3rver_process.h"
#include "store/dir_store.h"
#include "store/s3_store.h"

namespace archil::testing {
namespace {

using store::Condition;
using store::ObjectInfo;
using store::ObjectStore;

class StoreContract : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/store-contract-" + std::to_string(getpid()) + "-" + GetParam();
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    store::S3Config c;
    c.bucket = "archil";
    c.prefix = "pre/fix/";
    c.multipart_threshold = 6ull << 20;
    c.part_size = 5ull << 20;
    c.retry.max_attempts = 3;
    c.payload =
        Unsigned() ? store::S3Config::Payload::kUnsigned : store::S3Config::Payload::kSigned;
    if (GetParam() == "dir") {
      auto s = store::DirStore::Open(dir_ + "/objects");
      ASSERT_TRUE(s.ok()) << s.status().ToString();
      store_ = std::move(*s);
      return;
    }
    if (GetParam().rfind("fake", 0) == 0) {
      auto f = S3Fake::Start({});
      ASSERT_TRUE(f.ok()) << f.status().ToString();
      fake_ = std::move(*f);
      c.endpoint = fake_->endpoint();
      c.credentials = {"archil-test", "archil-test-secret", ""};
    } else {
      auto p = S3rverProcess::Start(dir_, "archil");
      if (!p.ok() && p.status().code() == Status::Code::kNotFound && !S3rverRequired()) {
        GTEST_SKIP() << p.status().ToString();
      }
      ASSERT_TRUE(p.ok()) << p.status().ToString();
      s3rver_ = std::move(*p);
      c.endpoint = s3rver_->endpoint();
      c.credentials = {"S3RVER", "S3RVER", ""};
    }
    auto s = store::S3Store::Open(c);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = std::move(*s);
  }
  void TearDown() override {
    store_.reset();
    fake_.reset();
    s3rver_.reset();
    std::filesystem::remove_all(dir_);
  }
  bool Conditions() const { return GetParam().rfind("s3rver", 0) != 0; }
  // The "-unsigned" stores get PUT bodies as UNSIGNED-PAYLOAD with a CRC32C.
  bool Unsigned() const { return GetParam().find("-unsigned") != std::string::npos; }

  std::string dir_;
  std::unique_ptr<S3Fake> fake_;
  std::unique_ptr<S3rverProcess> s3rver_;
  std::unique_ptr<ObjectStore> store_;
};

TEST_P(StoreContract, TheProbeFoundWhatTheStoreDoes) {
  EXPECT_EQ(store_->EnforcesConditions(), Conditions()) << store_->Describe();
}

TEST_P(StoreContract, PutGetRangesHeadDelete) {
  std::string data(100000, '\0');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i * 7 + i / 256);
  Result<std::string> etag = store_->Put("disks/1/seg/1", data, {});
  ASSERT_TRUE(etag.ok()) << etag.status().ToString();
  EXPECT_EQ(*store_->Get("disks/1/seg/1"), data);
  EXPECT_EQ(*store_->Get("disks/1/seg/1", 4096, 8192), data.substr(4096, 8192));
  EXPECT_EQ(*store_->Get("disks/1/seg/1", 99990), data.substr(99990));
  EXPECT_EQ(*store_->Get("disks/1/seg/1", 99990, 100), data.substr(99990));
  EXPECT_EQ(*store_->Get("disks/1/seg/1", 100000, 10), "");
  Result<ObjectInfo> info = store_->Head("disks/1/seg/1");
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_EQ(info->size, data.size());
  EXPECT_EQ(info->etag, *etag);
  ASSERT_TRUE(store_->Put("empty", "", {}).ok());
  EXPECT_EQ(*store_->Get("empty"), "");
  EXPECT_EQ(store_->Head("empty")->size, 0u);
  ASSERT_TRUE(store_->Delete("disks/1/seg/1").ok());
  EXPECT_EQ(store_->Get("disks/1/seg/1").status().code(), Status::Code::kNotFound);
  EXPECT_EQ(store_->Head("disks/1/seg/1").status().code(), Status::Code::kNotFound);
  EXPECT_TRUE(store_->Delete("disks/1/seg/1").ok());
}

TEST_P(StoreContract, KeysWithEveryPrintableByteRoundTrip) {
  const std::string key = "k/a+b=c&d~e_(1)!*'$,;:@%20[x]{y}|^`\"<>#?z";
  ASSERT_TRUE(store_->Put(key, "v", {}).ok()) << key;
  EXPECT_EQ(*store_->Get(key), "v");
  Result<store::ListPage> page = store_->List("k/", "", 10);
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  ASSERT_EQ(page->objects.size(), 1u);
  EXPECT_EQ(page->objects[0].key, key);
}

TEST_P(StoreContract, ConditionalWrites) {
  if (!Conditions()) GTEST_SKIP() << "this store ignores conditions (the probe said so)";
  Result<std::string> e1 = store_->Put("log/1", "one", {Condition::kIfAbsent, ""});
  ASSERT_TRUE(e1.ok()) << e1.status().ToString();
  EXPECT_EQ(store_->Put("log/1", "two", {Condition::kIfAbsent, ""}).status().code(),
            Status::Code::kAlreadyExists);
  EXPECT_EQ(*store_->Get("log/1"), "one");
  Result<std::string> e2 = store_->Put("log/1", "three", {Condition::kIfMatch, *e1});
  ASSERT_TRUE(e2.ok()) << e2.status().ToString();
  EXPECT_EQ(store_->Put("log/1", "four", {Condition::kIfMatch, *e1}).status().code(),
            Status::Code::kFailedPrecondition);
  EXPECT_EQ(*store_->Get("log/1"), "three");
}

TEST_P(StoreContract, ListPagesEveryKeyOnceInOrder) {
  std::set<std::string> want;
  for (int i = 0; i < 150; ++i) {
    const std::string key = "disks/" + std::to_string(i % 2) + "/log/" + std::to_string(1000 + i);
    ASSERT_TRUE(store_->Put(key, "x", {}).ok());
    if (i % 2 == 1) want.insert(key);
  }
  std::vector<std::string> got;
  std::string after;
  for (int pages = 0;; ++pages) {
    ASSERT_LT(pages, 100);
    Result<store::ListPage> page = store_->List("disks/1/", after, 16);
    ASSERT_TRUE(page.ok()) << page.status().ToString();
    for (const ObjectInfo& o : page->objects) got.push_back(o.key);
    if (!page->truncated) break;
    after = got.back();
  }
  EXPECT_EQ(got, std::vector<std::string>(want.begin(), want.end()));
}

TEST_P(StoreContract, PutFileSmallAndMultipart) {
  for (uint64_t size : {uint64_t{4096}, uint64_t{17} << 20}) {
    const std::string path = dir_ + "/seg-" + std::to_string(size);
    std::string data(size, '\0');
    uint64_t x = size;
    for (char& c : data) c = static_cast<char>((x = x * 6364136223846793005ull + 1) >> 56);
    std::ofstream(path, std::ios::binary) << data;
    const std::string key = "segs/" + std::to_string(size);
    Result<ObjectStore::FileUpload> up = store_->PutFile(key, path, size);
    ASSERT_TRUE(up.ok()) << up.status().ToString();
    EXPECT_EQ(up->linked, GetParam() == "dir");
    Result<std::string> back = store_->Get(key);
    ASSERT_TRUE(back.ok());
    EXPECT_TRUE(*back == data) << "object " << key << " differs from the file";
    EXPECT_EQ(store_->Head(key)->size, size);
    if (Conditions()) {
      EXPECT_EQ(store_->PutFile(key, path, size).status().code(), Status::Code::kAlreadyExists);
    }
  }
}

// The default: unsigned over https (TLS protects the bytes), signed over http.
TEST(S3Payload, AutoIsUnsignedOverHttpsOnly) {
  store::S3Config c;
  c.bucket = "archil";
  c.probe = false;
  auto open = [&](const char* endpoint, store::S3Config::Payload payload) {
    c.endpoint = endpoint;
    c.payload = payload;
    Result<std::unique_ptr<store::S3Store>> s = store::S3Store::Open(c);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return s.ok() && (*s)->UnsignedPayload();
  };
  using P = store::S3Config::Payload;
  EXPECT_TRUE(open("https://s3.eu-west-1.amazonaws.com", P::kAuto));
  EXPECT_FALSE(open("http://127.0.0.1:9000", P::kAuto));
  EXPECT_TRUE(open("http://127.0.0.1:9000", P::kUnsigned));
  EXPECT_FALSE(open("https://s3.eu-west-1.amazonaws.com", P::kSigned));
}

// The fake counts what came signed, unsigned and with a checksum it verified.
TEST_P(StoreContract, PutBodiesAreSignedOrCarryTheirChecksumAsConfigured) {
  if (!fake_) GTEST_SKIP() << "only the fake counts this";
  const std::string path = dir_ + "/seg";
  std::ofstream(path, std::ios::binary) << std::string(11 << 20, 'x');
  const S3Fake::Counters before = fake_->counters();           // after the probe's writes
  ASSERT_TRUE(store_->PutFile("multi", path, 11 << 20).ok());  // parts of 5 MiB
  ASSERT_TRUE(store_->Put("single", "data", {}).ok());
  const S3Fake::Counters n = fake_->counters();
  EXPECT_EQ(n.parts - before.parts, 3u);
  EXPECT_EQ(n.unsigned_payloads - before.unsigned_payloads, Unsigned() ? 4u : 0u);
  EXPECT_EQ(n.checksums_verified - before.checksums_verified, Unsigned() ? 4u : 0u);
  EXPECT_EQ(n.bad_signatures, 0u);
  EXPECT_EQ(store_->Get("multi")->size(), 11u << 20);
}

INSTANTIATE_TEST_SUITE_P(Stores, StoreContract,
                         ::testing::Values("dir", "fake", "fake-unsigned", "s3rver",
                                           "s3rver-unsigned"),
                         [](const auto& info) {
                           std::string name = info.param;
                           for (char& c : name) c = c == '-' ? '_' : c;
                           return name;
                         });

}  // namespace
}  // namespace archil::testing
