// Disk tokens of a lineage through the API (docs/api.md "Disk users"): a branch has no tokens of
// its own, so its users are its root's, listed, added and revoked through the branch's id as
// through the root's; also once the root is deleted and kept hidden for its branches. A revoked
// token is announced (CatalogListener::OnTokenRevoked), which is how its sessions end.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/clock.h"
#include "catalog/sqlite_catalog.h"
#include "control/api_router.h"
#include "control/service.h"

namespace archil {
namespace {

using nlohmann::json;

// A lineage store that holds only what the test puts in it, and records what it is told.
struct FakeLineages final : CatalogListener, LineageStore {
  std::map<DiskId, LineageView> disks;
  std::vector<BranchView> branches;
  std::vector<std::string> revoked;  // "disk token"

  void OnDiskDeleted(const DiskId&) override {}
  void OnTokenRevoked(const DiskId& d, std::string_view token) override {
    revoked.push_back(d.str() + " " + std::string(token));
  }
  Result<LineageView> Lineage(const DiskId& d) override {
    auto it = disks.find(d);
    if (it == disks.end()) return Status::NotFound("no disk");
    return it->second;
  }
  Result<std::vector<CheckpointView>> Checkpoints(const DiskId&) override {
    return std::vector<CheckpointView>{};
  }
  Status DeleteCheckpoint(const DiskId&, std::string_view) override { return Status::Ok(); }
  Result<BranchResult> CreateBranch(const NewBranch&) override {
    return Status::FailedPrecondition("not here");
  }
  Result<std::vector<BranchView>> Branches(const DiskId&) override { return branches; }
  Status DeleteDisk(const DiskId& d) override {  // every disk here has branches: hidden
    disks[d].hidden = true;
    for (BranchView& b : branches) b.hidden = b.hidden || b.disk == d;
    return Status::Ok();
  }
};

class DiskUsersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto c = SqliteCatalog::Open(":memory:");
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    catalog_ = std::move(c).value();
    service_ = std::make_unique<ControlService>(catalog_.get(), &SystemClock::Instance(), "test",
                                                &store_, &store_);
    auto issued = service_->BootstrapAdminKey([this](const std::string& t) {
      key_ = t;
      return Status::Ok();
    });
    ASSERT_TRUE(issued.ok());
    router_ = std::make_unique<ApiRouter>(service_.get());

    CreateDiskRequest create;
    create.name = "root";
    Result<CreatedDisk> d = service_->CreateDisk(create);
    ASSERT_TRUE(d.ok()) << d.status().ToString();
    root_ = d->disk.id;
    first_user_ = d->disk.users.at(0).identifier;
    branch_ = DiskId::Trusted("dsk-00000000000000b1");
    hidden_branch_ = DiskId::Trusted("dsk-00000000000000b2");
    store_.disks[root_] = LineageView{root_, std::nullopt, false};
    store_.disks[branch_] = LineageView{root_, root_, false};
    store_.disks[hidden_branch_] = LineageView{root_, root_, true};
    store_.branches = {BranchView{branch_, root_, "b1", "cp", 1, false},
                       BranchView{hidden_branch_, root_, "b2", "cp", 2, true}};
  }

  // The response's status and its data.
  std::pair<int, json> Call(const std::string& method, const std::string& path,
                            const std::string& body = "") {
    ApiRequest r;
    r.method = method;
    r.path = path;
    r.authorization = "Bearer " + key_;
    r.body = body;
    ApiResponse resp = router_->Handle(r);
    json j = json::parse(resp.body, nullptr, false);
    return {resp.status, j.is_object() && j.contains("data") ? j["data"] : j};
  }
  std::vector<std::string> Identifiers(const DiskId& disk) {
    auto [status, data] = Call("GET", "/api/disks/" + disk.str() + "/users");
    EXPECT_EQ(status, 200) << data.dump();
    std::vector<std::string> ids;
    if (data.is_array()) {
      for (const json& u : data) ids.push_back(u.value("identifier", ""));
    }
    return ids;
  }
  // Adds a token through `disk`; returns its identifier.
  std::string Add(const DiskId& disk) {
    auto [status, data] =
        Call("POST", "/api/disks/" + disk.str() + "/users", R"({"nickname":"n"})");
    EXPECT_EQ(status, 201) << data.dump();
    return data.value("identifier", "");
  }
  bool Authenticates(const std::string& identifier) {
    return catalog_->GetDiskUser(identifier).ok();
  }

  FakeLineages store_;
  std::unique_ptr<SqliteCatalog> catalog_;
  std::unique_ptr<ControlService> service_;
  std::unique_ptr<ApiRouter> router_;
  std::string key_;
  DiskId root_, branch_, hidden_branch_;
  std::string first_user_;
};

TEST_F(DiskUsersTest, ABranchsUsersAreItsRootsThroughEitherId) {
  EXPECT_EQ(Identifiers(branch_), std::vector<std::string>{first_user_});
  const std::string added = Add(branch_);
  EXPECT_EQ(Identifiers(root_), (std::vector<std::string>{first_user_, added}));
  EXPECT_EQ(Call("DELETE", "/api/disks/" + branch_.str() + "/users/" + added).first, 200);
  EXPECT_FALSE(Authenticates(added));
  EXPECT_EQ(store_.revoked, std::vector<std::string>{root_.str() + " " + added});
  EXPECT_EQ(Call("DELETE", "/api/disks/" + branch_.str() + "/users/" + added).first, 404);
  EXPECT_EQ(Identifiers(branch_), std::vector<std::string>{first_user_});
  // A hidden branch is gone for its users.
  EXPECT_EQ(Call("GET", "/api/disks/" + hidden_branch_.str() + "/users").first, 404);
  EXPECT_EQ(Call("DELETE", "/api/disks/" + hidden_branch_.str() + "/users/" + first_user_).first,
            404);
  EXPECT_EQ(Call("GET", "/api/disks/dsk-00000000000000ff/users").first, 404);
}

// The root deleted while it has branches: hidden, but its tokens still open the branches, so
// they can still be listed, added and revoked, through the root's id or a branch's.
TEST_F(DiskUsersTest, AHiddenRootsTokensCanBeListedAddedAndRevoked) {
  auto [deleted, data] = Call("DELETE", "/api/disks/" + root_.str());
  ASSERT_EQ(deleted, 200) << data.dump();
  ASSERT_EQ(data.value("status", ""), "hidden");
  EXPECT_EQ(Call("GET", "/api/disks/" + root_.str()).first, 404);  // gone for the API

  EXPECT_EQ(Identifiers(branch_), std::vector<std::string>{first_user_});
  EXPECT_EQ(Identifiers(root_), std::vector<std::string>{first_user_});
  const std::string through_root = Add(root_);
  const std::string through_branch = Add(branch_);
  EXPECT_EQ(Identifiers(branch_),
            (std::vector<std::string>{first_user_, through_root, through_branch}));
  ASSERT_TRUE(Authenticates(through_root));

  EXPECT_EQ(Call("DELETE", "/api/disks/" + branch_.str() + "/users/" + first_user_).first, 200);
  EXPECT_EQ(Call("DELETE", "/api/disks/" + root_.str() + "/users/" + through_root).first, 200);
  EXPECT_FALSE(Authenticates(first_user_));
  EXPECT_FALSE(Authenticates(through_root));
  EXPECT_TRUE(Authenticates(through_branch));
  EXPECT_EQ(store_.revoked, (std::vector<std::string>{root_.str() + " " + first_user_,
                                                      root_.str() + " " + through_root}));
  EXPECT_EQ(Identifiers(root_), std::vector<std::string>{through_branch});
  EXPECT_EQ(Call("DELETE", "/api/disks/" + root_.str() + "/users/" + first_user_).first, 404);
}

// A disk deleted for good (no branches) has no users to manage.
TEST_F(DiskUsersTest, ADiskDeletedForGoodHasNone) {
  store_.disks.clear();
  store_.branches.clear();
  ASSERT_EQ(Call("DELETE", "/api/disks/" + root_.str()).first, 200);
  EXPECT_EQ(Call("GET", "/api/disks/" + root_.str() + "/users").first, 404);
  EXPECT_EQ(Call("POST", "/api/disks/" + root_.str() + "/users", R"({"nickname":"n"})").first, 404);
  EXPECT_EQ(Call("DELETE", "/api/disks/" + root_.str() + "/users/" + first_user_).first, 404);
  EXPECT_TRUE(store_.revoked.empty());
}

}  // namespace
}  // namespace archil
