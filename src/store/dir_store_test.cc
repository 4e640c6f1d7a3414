#include "store/dir_store.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

namespace archil::store {
namespace {

class DirStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = ::testing::TempDir() + "/dirstore-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::remove_all(root_);
    Result<std::unique_ptr<DirStore>> s = DirStore::Open(root_ + "/objects");
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = std::move(*s);
  }
  void TearDown() override { std::filesystem::remove_all(root_); }

  std::string root_;
  std::unique_ptr<ObjectStore> store_;
};

TEST_F(DirStoreTest, PutGetHeadDelete) {
  Result<std::string> etag = store_->Put("disks/1/MANIFEST", "hello world", {});
  ASSERT_TRUE(etag.ok()) << etag.status().ToString();
  EXPECT_EQ(*store_->Get("disks/1/MANIFEST"), "hello world");
  EXPECT_EQ(*store_->Get("disks/1/MANIFEST", 6, 3), "wor");
  EXPECT_EQ(*store_->Get("disks/1/MANIFEST", 6), "world");
  EXPECT_EQ(*store_->Get("disks/1/MANIFEST", 11), "");
  EXPECT_EQ(*store_->Get("disks/1/MANIFEST", 100, 5), "");
  Result<ObjectInfo> info = store_->Head("disks/1/MANIFEST");
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->size, 11u);
  EXPECT_EQ(info->etag, *etag);
  ASSERT_TRUE(store_->Delete("disks/1/MANIFEST").ok());
  EXPECT_EQ(store_->Get("disks/1/MANIFEST").status().code(), Status::Code::kNotFound);
  EXPECT_EQ(store_->Head("disks/1/MANIFEST").status().code(), Status::Code::kNotFound);
  EXPECT_TRUE(store_->Delete("disks/1/MANIFEST").ok());
  EXPECT_EQ(store_->Get("disks").status().code(), Status::Code::kNotFound);  // a directory
}

TEST_F(DirStoreTest, IfAbsentRefusesASecondWriteAndKeepsTheFirst) {
  ASSERT_TRUE(store_->Put("log/1", "first", {Condition::kIfAbsent, ""}).ok());
  Result<std::string> again = store_->Put("log/1", "second", {Condition::kIfAbsent, ""});
  EXPECT_EQ(again.status().code(), Status::Code::kAlreadyExists);
  EXPECT_EQ(*store_->Get("log/1"), "first");
}

TEST_F(DirStoreTest, IfMatchIsACompareAndSwap) {
  Result<std::string> e1 = store_->Put("MANIFEST", "v1", {});
  ASSERT_TRUE(e1.ok());
  Result<std::string> e2 = store_->Put("MANIFEST", "v2", {Condition::kIfMatch, *e1});
  ASSERT_TRUE(e2.ok()) << e2.status().ToString();
  EXPECT_NE(*e1, *e2);
  EXPECT_EQ(store_->Put("MANIFEST", "v3", {Condition::kIfMatch, *e1}).status().code(),
            Status::Code::kFailedPrecondition);
  EXPECT_EQ(*store_->Get("MANIFEST"), "v2");
  EXPECT_EQ(store_->Put("absent", "x", {Condition::kIfMatch, *e2}).status().code(),
            Status::Code::kFailedPrecondition);
}

TEST_F(DirStoreTest, RacingCompareAndSwapsHaveOneWinner) {
  // Threads of one process share the lock file's open file description, so flock alone would
  // let them all win; rounds make a lost exclusion show up in most runs.
  for (int round = 0; round < 50; ++round) {
    Result<std::string> base = store_->Put("MANIFEST", "base", {});
    ASSERT_TRUE(base.ok());
    std::atomic<int> wins{0};
    std::vector<std::thread> threads;
    for (int i = 0; i < 8; ++i) {
      threads.emplace_back([&, i] {
        if (store_->Put("MANIFEST", "w" + std::to_string(i), {Condition::kIfMatch, *base}).ok()) {
          wins.fetch_add(1);
        }
      });
    }
    for (auto& t : threads) t.join();
    ASSERT_EQ(wins.load(), 1) << "round " << round;
  }
}

TEST_F(DirStoreTest, ACompareAndSwapNeverLandsOnARemovalItDidNotSee) {
  for (int round = 0; round < 50; ++round) {
    Result<std::string> base = store_->Put("MANIFEST", "base", {});
    ASSERT_TRUE(base.ok());
    std::atomic<bool> swapped{false};
    std::thread cas([&] {
      swapped = store_->Put("MANIFEST", "swapped", {Condition::kIfMatch, *base}).ok();
    });
    ASSERT_TRUE(store_->Delete("MANIFEST").ok());
    cas.join();
    // Either the swap came first and the removal took it away, or the removal came first and
    // the swap failed: never an object after both.
    Result<std::string> got = store_->Get("MANIFEST");
    EXPECT_EQ(got.status().code(), Status::Code::kNotFound)
        << "round " << round << ": swapped=" << swapped.load();
  }
}

TEST_F(DirStoreTest, PutFileLinksOnTheSameFileSystem) {
  const std::string seg = root_ + "/segment";
  std::ofstream(seg) << std::string(4096, 'x');
  Result<ObjectStore::FileUpload> up = store_->PutFile("segs/1", seg, 4096);
  ASSERT_TRUE(up.ok()) << up.status().ToString();
  EXPECT_TRUE(up->linked);
  struct stat a, b;
  ASSERT_EQ(stat(seg.c_str(), &a), 0);
  ASSERT_EQ(stat((root_ + "/objects/segs/1").c_str(), &b), 0);
  EXPECT_EQ(a.st_ino, b.st_ino);
  EXPECT_EQ(store_->PutFile("segs/1", seg, 4096).status().code(), Status::Code::kAlreadyExists);
  // The object outlives the segment file's own name.
  ASSERT_EQ(unlink(seg.c_str()), 0);
  EXPECT_EQ(store_->Get("segs/1")->size(), 4096u);
}

TEST_F(DirStoreTest, PutFileOfAPrefixCopies) {
  const std::string seg = root_ + "/segment";
  std::ofstream(seg) << "0123456789";
  Result<ObjectStore::FileUpload> up = store_->PutFile("segs/2", seg, 4);
  ASSERT_TRUE(up.ok()) << up.status().ToString();
  EXPECT_FALSE(up->linked);
  EXPECT_EQ(*store_->Get("segs/2"), "0123");
  EXPECT_EQ(store_->PutFile("segs/3", seg, 20).status().code(), Status::Code::kIoError);
  EXPECT_EQ(store_->Head("segs/3").status().code(), Status::Code::kNotFound);
  EXPECT_EQ(store_->PutFile("segs/4", root_ + "/absent", 1).status().code(),
            Status::Code::kNotFound);
}

TEST_F(DirStoreTest, ListIsSortedPagedAndPrefixed) {
  std::set<std::string> want;
  for (int i = 0; i < 250; ++i) {
    const std::string key = "disks/" + std::to_string(i % 3) + "/log/" + std::to_string(i);
    ASSERT_TRUE(store_->Put(key, "x", {}).ok());
    if (i % 3 == 1) want.insert(key);
  }
  ASSERT_TRUE(store_->Put("disks/10/log/1", "x", {}).ok());
  std::vector<std::string> got;
  std::string after;
  for (;;) {
    Result<ListPage> page = store_->List("disks/1/", after, 7);
    ASSERT_TRUE(page.ok()) << page.status().ToString();
    for (const ObjectInfo& o : page->objects) got.push_back(o.key);
    if (!page->truncated) break;
    after = got.back();
  }
  EXPECT_EQ(got, std::vector<std::string>(want.begin(), want.end()));
  Result<ListPage> all = store_->List("disks/1", "", 1000);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->objects.size(), want.size() + 1);  // disks/10/log/1 too
  EXPECT_TRUE(store_->List("nothing/", "", 10)->objects.empty());
  EXPECT_TRUE(store_->List(".archil-tmp/", "", 10)->objects.empty());
  EXPECT_EQ(store_->List("", "", 0).status().code(), Status::Code::kInvalidArgument);
}

TEST_F(DirStoreTest, BadKeysTouchNothing) {
  for (std::string_view key : {"../escape", "/abs", "a//b", ".archil-tmp/lock", ".archil-tmp"}) {
    EXPECT_EQ(store_->Put(key, "x", {}).status().code(), Status::Code::kInvalidArgument) << key;
    EXPECT_EQ(store_->Get(key).status().code(), Status::Code::kInvalidArgument) << key;
    EXPECT_EQ(store_->Delete(key).code(), Status::Code::kInvalidArgument) << key;
  }
  EXPECT_FALSE(std::filesystem::exists(root_ + "/escape"));
}

TEST_F(DirStoreTest, LeftoverTemporariesAreRemovedAtOpen) {
  const std::string tmp = root_ + "/objects/.archil-tmp/t.deadbeef";
  std::ofstream(tmp) << "torn";
  store_.reset();
  Result<std::unique_ptr<DirStore>> s = DirStore::Open(root_ + "/objects");
  ASSERT_TRUE(s.ok());
  EXPECT_FALSE(std::filesystem::exists(tmp));
}

TEST(DirStoreOpen, RefusesARelativePath) {
  EXPECT_EQ(DirStore::Open("relative/objects").status().code(), Status::Code::kInvalidArgument);
}

}  // namespace
}  // namespace archil::store
