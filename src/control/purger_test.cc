#include "control/purger.h"

#include <gtest/gtest.h>

#include <chrono>
#include <set>
#include <thread>

#include "catalog/events.h"
#include "catalog/sqlite_catalog.h"

namespace archil {
namespace {

// A DiskDataStore that records purges and fails on demand.
class FakeData : public DiskDataStore {
 public:
  Status PurgeDiskData(const DiskId& disk) override {
    MutexLock lock(&mu);
    ++calls;
    if (fail_next > 0) {
      --fail_next;
      return Status::Errno(EIO, "disk went away");
    }
    if (has_branches.count(disk)) return Status::FailedPrecondition("kept for its branches");
    purged.insert(disk);
    return Status::Ok();
  }
  std::set<DiskId> Purged() {
    MutexLock lock(&mu);
    return purged;
  }
  Mutex mu;
  int calls ARCHIL_GUARDED_BY(mu) = 0;
  int fail_next ARCHIL_GUARDED_BY(mu) = 0;
  std::set<DiskId> purged ARCHIL_GUARDED_BY(mu);
  std::set<DiskId> has_branches ARCHIL_GUARDED_BY(mu);
};

class PurgerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto c = SqliteCatalog::Open(":memory:");
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    catalog_ = std::move(c).value();
  }
  DiskId AddDisk(int n, bool deleting) {
    char hex[17];
    snprintf(hex, sizeof(hex), "%016x", n);
    Disk d;
    d.id = DiskId::Trusted(std::string("dsk-") + hex);
    d.name = "d" + std::to_string(n);
    d.region = "local";
    DiskUser u{std::string(hex), d.id, "token", "default", "abcd", std::string(64, 'f'), 1};
    EXPECT_TRUE(catalog_->CreateDisk(d, u).ok());
    if (deleting) {
      EXPECT_TRUE(catalog_->MarkDiskDeleting(d.id, false).ok());
    }
    return d.id;
  }
  std::unique_ptr<SqliteCatalog> catalog_;
  FakeData data_;
};

TEST_F(PurgerTest, PurgesDataThenRecordsOfDeletingDisksOnly) {
  DiskId live = AddDisk(1, false);
  DiskId gone = AddDisk(2, true);
  DiskPurger purger(catalog_.get(), &data_);
  ASSERT_TRUE(purger.PurgeOnce().ok());
  EXPECT_EQ(data_.Purged(), std::set<DiskId>{gone});
  EXPECT_TRUE(catalog_->DisksToPurge()->empty());
  EXPECT_TRUE(catalog_->GetDisk(live).ok());
  // Nothing left: a second pass purges nothing.
  ASSERT_TRUE(purger.PurgeOnce().ok());
  MutexLock lock(&data_.mu);
  EXPECT_EQ(data_.calls, 1);
}

// A disk that got branches between its delete and its purge is hidden by the data store: its row
// and its tokens stay for the branches, and later passes leave it alone.
TEST_F(PurgerTest, KeepsADiskWhoseDataIsKeptForBranches) {
  DiskId gone = AddDisk(5, true);
  {
    MutexLock lock(&data_.mu);
    data_.has_branches.insert(gone);
  }
  DiskPurger purger(catalog_.get(), &data_);
  ASSERT_TRUE(purger.PurgeOnce().ok());
  EXPECT_TRUE(data_.Purged().empty());
  EXPECT_EQ(*catalog_->DisksKeptForBranches(), std::vector<DiskId>{gone});
  EXPECT_TRUE(catalog_->GetDiskUser("0000000000000005").ok());
  ASSERT_TRUE(purger.PurgeOnce().ok());
  MutexLock lock(&data_.mu);
  EXPECT_EQ(data_.calls, 1);
}

// When the data cannot be freed, the catalog rows stay, so the next pass tries again: data is
// never orphaned by forgetting the disk first.
TEST_F(PurgerTest, KeepsTheRecordsWhenTheDataPurgeFails) {
  DiskId gone = AddDisk(3, true);
  {
    MutexLock lock(&data_.mu);
    data_.fail_next = 1;
  }
  DiskPurger purger(catalog_.get(), &data_);
  Status s = purger.PurgeOnce();
  EXPECT_EQ(s.code(), Status::Code::kIoError);
  EXPECT_NE(s.message().find(gone.str()), std::string::npos) << s.ToString();
  EXPECT_EQ(*catalog_->DisksToPurge(), std::vector<DiskId>{gone});
  ASSERT_TRUE(purger.PurgeOnce().ok());
  EXPECT_TRUE(catalog_->DisksToPurge()->empty());
  EXPECT_EQ(data_.Purged(), std::set<DiskId>{gone});
}

bool WaitUntilNothingToPurge(Catalog* catalog) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < deadline) {
    if (catalog->DisksToPurge()->empty()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

// An idle purger sleeps for a minute between passes; a delete event must wake it at once.
TEST_F(PurgerTest, DeleteEventWakesTheIdleThread) {
  DiskPurger purger(catalog_.get(), &data_);
  purger.Start();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // its first pass is done
  DiskId gone = AddDisk(4, true);
  CatalogEvents events;
  events.Subscribe(&purger);
  events.OnDiskDeleted(gone);
  EXPECT_TRUE(WaitUntilNothingToPurge(catalog_.get()));
  events.Unsubscribe(&purger);
  purger.Stop();
  EXPECT_EQ(data_.Purged(), std::set<DiskId>{gone});
}

TEST_F(PurgerTest, FailedPassesAreRetriedByThemselves) {
  DiskId gone = AddDisk(5, true);
  {
    MutexLock lock(&data_.mu);
    data_.fail_next = 2;
  }
  DiskPurger purger(catalog_.get(), &data_, std::chrono::milliseconds(20));
  purger.Start();
  EXPECT_TRUE(WaitUntilNothingToPurge(catalog_.get()));
  purger.Stop();
  EXPECT_EQ(data_.Purged(), std::set<DiskId>{gone});
  MutexLock lock(&data_.mu);
  EXPECT_EQ(data_.calls, 3);  // two failures, then success
}

}  // namespace
}  // namespace archil
