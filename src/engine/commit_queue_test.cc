#include "engine/commit_queue.h"

#include <gtest/gtest.h>
#include <rocksdb/db.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <thread>

#include "base/coding.h"

namespace archil::engine {
namespace {

class CommitQueueTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("archil-commitq-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    rocksdb::Options o;
    o.create_if_missing = true;
    rocksdb::DB* db = nullptr;
    ASSERT_TRUE(rocksdb::DB::Open(o, dir_.string(), &db).ok());
    db_.reset(db);
  }
  void TearDown() override {
    db_.reset();
    std::filesystem::remove_all(dir_);
  }
  uint64_t Counter(Txn& txn) {
    Result<std::string> v = txn.Get(db_->DefaultColumnFamily(), "counter");
    return v.ok() ? DecodeFixed64LE(v->data()) : 0;
  }
  std::string Stored(const std::string& key) {
    std::string v;
    return db_->Get(rocksdb::ReadOptions(), key, &v).ok() ? v : "<absent>";
  }

  std::filesystem::path dir_;
  std::unique_ptr<rocksdb::DB> db_;
};

// Read-modify-write from many threads: each increment sees every earlier one, in its group or
// before it, so none is lost; and concurrent callers share WAL writes.
TEST_F(CommitQueueTest, SerializesMutationsAndGroupsTheirWrites) {
  CommitQueue q(db_.get());
  constexpr int kThreads = 8, kEach = 100;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kEach; ++i) {
        Status s = q.Commit([&](Txn& txn) {
          std::string v;
          PutFixed64LE(&v, Counter(txn) + 1);
          txn.Put(db_->DefaultColumnFamily(), "counter", v);
          return Status::Ok();
        });
        ASSERT_TRUE(s.ok()) << s.ToString();
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(DecodeFixed64LE(Stored("counter").data()), uint64_t{kThreads * kEach});
  CommitStats st = q.stats();
  EXPECT_EQ(st.ops, uint64_t{kThreads * kEach});
  EXPECT_LT(st.groups, st.ops) << "no two concurrent mutations ever shared a write";
}

TEST_F(CommitQueueTest, AFailedPrepareIsRolledBackAlone) {
  CommitQueue q(db_.get());
  auto* cf = db_->DefaultColumnFamily();
  ASSERT_TRUE(q.Commit([&](Txn& txn) {
                 txn.Put(cf, "a", "1");
                 return Status::Ok();
               }).ok());
  Status failed = q.Commit([&](Txn& txn) {
    txn.Put(cf, "b", "2");
    txn.Delete(cf, "a");
    return Status::Errno(ENOSPC, "no room");
  });
  EXPECT_EQ(ErrnoFor(failed), ENOSPC);
  EXPECT_EQ(Stored("a"), "1");
  EXPECT_EQ(Stored("b"), "<absent>");
  Result<int> r = q.CommitWith<int>([&](Txn& txn) -> Result<int> {
    Result<std::string> b = txn.Get(cf, "b");
    EXPECT_EQ(b.status().code(), Status::Code::kNotFound);
    txn.Put(cf, "c", "3");
    return 42;
  });
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, 42);
  EXPECT_EQ(Stored("c"), "3");
}

// Within one group, a later prepare sees an earlier one's writes, also through an iterator; a
// hook registered with OnCommit runs only for mutations that committed.
TEST_F(CommitQueueTest, LaterMutationsSeeEarlierOnesAndHooksRunOnCommit) {
  CommitQueue q(db_.get());
  auto* cf = db_->DefaultColumnFamily();
  std::atomic<int> hooks{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        std::string key = "k" + std::to_string(t) + "-" + std::to_string(i);
        ASSERT_TRUE(q.Commit([&](Txn& txn) {
                       txn.Put(cf, key, "v");
                       auto it = txn.NewIterator(cf);
                       it->Seek(key);
                       EXPECT_TRUE(it->Valid() && it->key().ToString() == key);
                       txn.OnCommit([&] { hooks++; });
                       return Status::Ok();
                     }).ok());
        Status refused = q.Commit([&](Txn& txn) {
          txn.OnCommit([&] { hooks += 1000; });
          return Status::InvalidArgument("never");
        });
        EXPECT_EQ(refused.code(), Status::Code::kInvalidArgument);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(hooks.load(), 200);
}

}  // namespace
}  // namespace archil::engine
