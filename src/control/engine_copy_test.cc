// A new disk's engine copy is made after the reply (control/after_reply.h), so a delete can come
// first: the copy then goes the way of the disk, and nothing is left in the engine.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "base/clock.h"
#include "catalog/sqlite_catalog.h"
#include "control/after_reply.h"
#include "control/service.h"

namespace archil {
namespace {

namespace fs = std::filesystem;

// What the engine side is told, in order.
struct Recorder final : CatalogListener, LineageStore {
  std::vector<std::string> log;
  void OnDiskCreated(const Disk& d) override { log.push_back("created " + d.id.str()); }
  void OnDiskDeleted(const DiskId& d) override { log.push_back("deleted " + d.str()); }
  void OnTokenRevoked(const DiskId&, std::string_view) override {}
  Result<LineageView> Lineage(const DiskId&) override { return Status::NotFound("no lineage"); }
  Result<std::vector<CheckpointView>> Checkpoints(const DiskId&) override {
    return std::vector<CheckpointView>{};
  }
  Status DeleteCheckpoint(const DiskId&, std::string_view) override { return Status::Ok(); }
  Result<BranchResult> CreateBranch(const NewBranch&) override {
    return Status::FailedPrecondition("no branches here");
  }
  Result<std::vector<BranchView>> Branches(const DiskId&) override {
    return std::vector<BranchView>{};
  }
  Status DeleteDisk(const DiskId& d) override {
    log.push_back("engine delete " + d.str());
    return Status::Ok();
  }
};

CreateDiskRequest Named(std::string name) {
  CreateDiskRequest r;
  r.name = std::move(name);
  return r;
}

class EngineCopyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("archil-engine-copy-" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    auto c = SqliteCatalog::Open((dir_ / "catalog.db").string());
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    catalog_ = std::move(c.value());
    service_ = std::make_unique<ControlService>(catalog_.get(), &SystemClock::Instance(), "test",
                                                &rec_, &rec_);
  }
  void TearDown() override {
    service_.reset();
    catalog_.reset();
    fs::remove_all(dir_);
  }
  fs::path dir_;
  Recorder rec_;
  std::unique_ptr<SqliteCatalog> catalog_;
  std::unique_ptr<ControlService> service_;
};

TEST_F(EngineCopyTest, TheCopyIsMadeAfterTheReply) {
  AfterReplyScope scope;
  Result<CreatedDisk> d = service_->CreateDisk(Named("a"));
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_TRUE(rec_.log.empty());  // the reply goes first
  scope.Run();
  EXPECT_EQ(rec_.log, std::vector<std::string>{"created " + d->disk.id.str()});
}

TEST_F(EngineCopyTest, ADeleteBeforeTheCopyTakesTheCopyWithIt) {
  std::string id;
  {
    AfterReplyScope scope;
    Result<CreatedDisk> d = service_->CreateDisk(Named("b"));
    ASSERT_TRUE(d.ok());
    id = d->disk.id.str();
    // The client had its reply and deleted the disk before this thread got to its copy.
    ASSERT_TRUE(service_->DeleteDisk(id).ok());
  }
  EXPECT_EQ(rec_.log,
            (std::vector<std::string>{"deleted " + id, "created " + id, "engine delete " + id}));
}

TEST_F(EngineCopyTest, OutsideAHandlerTheCopyIsMadeAtOnce) {
  Result<CreatedDisk> d = service_->CreateDisk(Named("c"));
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(rec_.log, std::vector<std::string>{"created " + d->disk.id.str()});
}

}  // namespace
}  // namespace archil
