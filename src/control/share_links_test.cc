// Share links through the router and the service, with a fake clock (expiry to the second), a
// fake lineage store and in-memory files: what the end-to-end suite (tests/share_e2e_test.cc)
// checks over a real server, here where time can be moved.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "base/clock.h"
#include "catalog/sqlite_catalog.h"
#include "control/api_router.h"
#include "control/body_stream.h"
#include "control/service.h"

namespace archil {
namespace {

using nlohmann::json;

struct OneRootLineages final : LineageStore {
  std::map<DiskId, LineageView> disks;
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
  Result<std::vector<BranchView>> Branches(const DiskId&) override {
    return std::vector<BranchView>{};
  }
  Status DeleteDisk(const DiskId& d) override {
    disks.erase(d);
    return Status::Ok();
  }
};

// Files in memory; each read returns at most 1000 bytes, so a body takes many reads. A file's
// `claimed` size may exceed its bytes (a file that shrank under a reader).
class MemoryFiles final : public DiskFiles {
 public:
  struct File {
    std::string bytes;
    uint64_t claimed = 0;
  };
  std::map<std::string, File> files;  // "disk/path"

  Result<std::unique_ptr<FileReader>> OpenFile(const DiskId& disk, std::string_view path) override {
    auto it = files.find(disk.str() + "/" + std::string(path));
    if (it == files.end()) return Status::NotFound("no file '" + std::string(path) + "'");
    return std::unique_ptr<FileReader>(std::make_unique<Reader>(it->second));
  }

 private:
  class Reader final : public FileReader {
   public:
    explicit Reader(File f) : f_(std::move(f)) {}
    uint64_t size() const override { return std::max<uint64_t>(f_.claimed, f_.bytes.size()); }
    Result<std::string> ReadAt(uint64_t offset, size_t length) override {
      if (offset >= f_.bytes.size()) return std::string();
      return f_.bytes.substr(offset, std::min<size_t>(length, 1000));
    }

   private:
    File f_;
  };
};

class ShareLinksTest : public ::testing::Test {
 protected:
  void SetUp() override {
    catalog_ = std::move(SqliteCatalog::Open(":memory:")).value();
    service_ = std::make_unique<ControlService>(catalog_.get(), &clock_, "test", nullptr, &store_);
    service_->set_files(&files_);
    ASSERT_TRUE(service_
                    ->BootstrapAdminKey([this](const std::string& t) {
                      key_ = t;
                      return Status::Ok();
                    })
                    .ok());
    router_ = std::make_unique<ApiRouter>(service_.get());
    CreateDiskRequest create;
    create.name = "d";
    Result<CreatedDisk> d = service_->CreateDisk(create);
    ASSERT_TRUE(d.ok()) << d.status().ToString();
    disk_ = d->disk.id;
    store_.disks[disk_] = LineageView{disk_, std::nullopt, false};
    for (int i = 0; i < 5000; ++i) content_ += static_cast<char>('a' + i % 26);
    files_.files[disk_.str() + "/dir/f"] = {content_, 0};
  }

  ApiResponse Call(const std::string& method, const std::string& path, const std::string& body,
                   bool with_key = true, const std::string& range = "") {
    return CallAs(with_key ? key_ : "", method, path, body, range);
  }
  // With `credential` (an API key or a disk token; "" = none).
  ApiResponse CallAs(const std::string& credential, const std::string& method,
                     const std::string& path, const std::string& body,
                     const std::string& range = "") {
    ApiRequest r;
    r.method = method;
    r.path = path;
    if (!credential.empty()) r.authorization = "Bearer " + credential;
    r.host = "files.example:8420";
    r.range = range;
    r.body = body;
    return router_->Handle(r);
  }
  // The token of a new link to `path`.
  std::string Link(const std::string& path, int expires_in) {
    ApiResponse r = Call("POST", "/api/disks/" + disk_.str() + "/share",
                         json{{"key", path}, {"expiresIn", expires_in}}.dump());
    EXPECT_EQ(r.status, 200) << r.body;
    std::string url = json::parse(r.body)["data"].value("url", "");
    EXPECT_EQ(url.rfind("http://files.example:8420/api/share/", 0), 0u) << url;
    return url.substr(url.rfind('/') + 1);
  }
  // The whole streamed body of `r`, as the session would read it.
  static std::string Drain(const ApiResponse& r) {
    EXPECT_TRUE(r.stream) << r.body;
    std::string out;
    while (r.stream) {
      Result<std::string> chunk = r.stream->Next(256 * 1024);
      EXPECT_TRUE(chunk.ok()) << chunk.status().ToString();
      if (!chunk.ok() || chunk->empty()) break;
      out += *chunk;
    }
    return out;
  }
  static std::string HeaderOf(const ApiResponse& r, const std::string& name) {
    for (const auto& [n, v] : r.headers) {
      if (n == name) return v;
    }
    return "";
  }

  FakeClock clock_;
  OneRootLineages store_;
  MemoryFiles files_;
  std::unique_ptr<SqliteCatalog> catalog_;
  std::unique_ptr<ControlService> service_;
  std::unique_ptr<ApiRouter> router_;
  std::string key_;
  DiskId disk_;
  std::string content_;
};

TEST_F(ShareLinksTest, ALinkWorksUntilItsLastSecondAndIsGoneAtItsExpiry) {
  const std::string token = Link("/dir//f", 60);
  clock_.Advance(59'999'999);
  ApiResponse r = Call("GET", "/api/share/" + token, "", /*with_key=*/false);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.content_type, "application/octet-stream");
  EXPECT_EQ(r.content_length, content_.size());
  EXPECT_EQ(Drain(r), content_);
  clock_.Advance(1);
  r = Call("GET", "/api/share/" + token, "", false);
  EXPECT_EQ(r.status, 410) << r.body;
  EXPECT_NE(r.body.find("expired at"), std::string::npos) << r.body;
  EXPECT_FALSE(r.stream);
}

TEST_F(ShareLinksTest, ALinkMadeLateInASecondStillLivesItsWholeTime) {
  clock_.Advance(999'999);  // 1 µs before a second ends
  const std::string token = Link("dir/f", 1);
  clock_.Advance(1'000'000);  // a full second after it was made
  ApiResponse r = Call("GET", "/api/share/" + token, "", /*with_key=*/false);
  EXPECT_EQ(r.status, 200) << r.body;
  clock_.Advance(1'000'000);  // never more than one second over
  r = Call("GET", "/api/share/" + token, "", false);
  EXPECT_EQ(r.status, 410) << r.body;
}

TEST_F(ShareLinksTest, RangesAreCutFromTheStreamedFile) {
  const std::string token = Link("dir/f", 600);
  ApiResponse r = Call("GET", "/api/share/" + token, "", false, "bytes=999-2500");
  EXPECT_EQ(r.status, 206);
  EXPECT_EQ(HeaderOf(r, "Content-Range"), "bytes 999-2500/5000");
  EXPECT_EQ(Drain(r), content_.substr(999, 1502));
  r = Call("HEAD", "/api/share/" + token, "", false, "bytes=-1");
  EXPECT_EQ(r.status, 206);
  EXPECT_EQ(r.content_length, 1u);
  r = Call("GET", "/api/share/" + token, "", false, "bytes=5000-");
  EXPECT_EQ(r.status, 416);
  EXPECT_EQ(HeaderOf(r, "Content-Range"), "bytes */5000");
  EXPECT_FALSE(r.stream);
}

TEST_F(ShareLinksTest, AFileShorterThanItsSizeEndsTheStreamWithAnError) {
  files_.files[disk_.str() + "/short"] = {"12345", 9000};
  const std::string token = Link("short", 600);
  ApiResponse r = Call("GET", "/api/share/" + token, "", false);
  ASSERT_TRUE(r.stream);
  EXPECT_EQ(r.content_length, 9000u);
  Result<std::string> first = r.stream->Next(256 * 1024);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(*first, "12345");
  Result<std::string> second = r.stream->Next(256 * 1024);
  EXPECT_EQ(second.status().code(), Status::Code::kIoError);
}

TEST_F(ShareLinksTest, TheUrlNamesTheRequestsHostAndSchemeOnlyIfItIsAHost) {
  ApiRequest r;
  r.method = "POST";
  r.path = "/api/disks/" + disk_.str() + "/share";
  r.authorization = "Bearer " + key_;
  r.body = R"({"key": "dir/f"})";
  r.scheme = "https";
  r.host = "[::1]:8420";
  ApiResponse ok = router_->Handle(r);
  ASSERT_EQ(ok.status, 200) << ok.body;
  EXPECT_EQ(json::parse(ok.body)["data"]["url"].get<std::string>().rfind("https://[::1]:8420/", 0),
            0u);
  EXPECT_EQ(json::parse(ok.body)["data"]["expiresIn"], 86400);
  for (const char* bad : {"", "evil.example/path?", "a b", "user@host"}) {
    r.host = bad;
    ApiResponse refused = router_->Handle(r);
    EXPECT_EQ(refused.status, 400) << bad << ": " << refused.body;
    EXPECT_NE(refused.body.find("Host"), std::string::npos) << refused.body;
  }
}

TEST_F(ShareLinksTest, RotationAndKeyDeletionEndLinksAndTheRestStillNeedsAKey) {
  const std::string before = Link("dir/f", 600);
  EXPECT_EQ(Call("POST", "/api/share-key/rotate", "", false).status, 401);
  ApiResponse rotated = Call("POST", "/api/share-key/rotate", "");
  EXPECT_EQ(rotated.status, 200) << rotated.body;
  ApiResponse old = Call("GET", "/api/share/" + before, "", false);
  EXPECT_EQ(old.status, 404);
  EXPECT_NE(old.body.find("no such share link"), std::string::npos);
  EXPECT_EQ(Call("GET", "/api/share/" + Link("dir/f", 600), "", false).status, 200);
  EXPECT_EQ(Call("DELETE", "/api/share/" + before, "", false).status, 405);
  EXPECT_EQ(
      Call("POST", "/api/disks/" + disk_.str() + "/share", R"({"key":"dir/f"})", false).status,
      401);

  // A link made by a second key dies with that key.
  Result<CreatedApiKey> second = service_->CreateApiKey("second", "");
  ASSERT_TRUE(second.ok());
  Result<ShareLink> link = service_->CreateShareLink({ShareMaker::kApiKey, second->key.id},
                                                     disk_.str(), "", "dir/f", 60);
  ASSERT_TRUE(link.ok()) << link.status().ToString();
  EXPECT_TRUE(service_->OpenShareLink(link->token).ok());
  ASSERT_TRUE(service_->DeleteApiKey(second->key.id).ok());
  EXPECT_EQ(service_->OpenShareLink(link->token).status().code(), Status::Code::kStale);

  // And with its disk.
  const std::string token = Link("dir/f", 600);
  ASSERT_TRUE(service_->DeleteDisk(disk_.str()).ok());
  ApiResponse gone = Call("GET", "/api/share/" + token, "", false);
  EXPECT_EQ(gone.status, 410) << gone.body;
  EXPECT_NE(gone.body.find("disk"), std::string::npos) << gone.body;
}

// POST /api/disks/{id}/share with `credential`, for `path` of disk `disk`.
ApiResponse ShareAs(ApiRouter* router, const std::string& credential, const DiskId& disk,
                    const std::string& path) {
  ApiRequest r;
  r.method = "POST";
  r.path = "/api/disks/" + disk.str() + "/share";
  r.authorization = "Bearer " + credential;
  r.host = "files.example:8420";
  r.body = json{{"key", path}, {"expiresIn", 600}}.dump();
  return router->Handle(r);
}

std::string TokenOf(const ApiResponse& r) {
  std::string url = json::parse(r.body)["data"].value("url", "");
  return url.substr(url.rfind('/') + 1);
}

// A disk token (a disk user, what a mount authenticates with) makes links of its disk; they end
// when that user is removed, not when another is, and expire as any link.
TEST_F(ShareLinksTest, ADiskTokenMakesLinksThatEndWhenItsUserIsRemoved) {
  Result<CreatedUser> alice = service_->AddDiskUser(disk_.str(), "alice");
  Result<CreatedUser> bob = service_->AddDiskUser(disk_.str(), "bob");
  ASSERT_TRUE(alice.ok() && bob.ok());
  ApiResponse made = ShareAs(router_.get(), alice->token, disk_, "/dir/f");
  ASSERT_EQ(made.status, 200) << made.body;
  const std::string by_alice = TokenOf(made);
  // The token says a disk user made it, and which one (version 2).
  Result<ShareClaims> claims = VerifyShareToken(by_alice, *catalog_->ShareKey());
  ASSERT_TRUE(claims.ok());
  EXPECT_EQ(claims->maker, ShareMaker::kDiskUser);
  EXPECT_EQ(claims->maker_id, alice->user.identifier);
  EXPECT_EQ(claims->path, "dir/f");
  const std::string by_bob = TokenOf(ShareAs(router_.get(), bob->token, disk_, "dir/f"));
  const std::string by_key = Link("dir/f", 600);

  ApiResponse got = Call("GET", "/api/share/" + by_alice, "", false);
  EXPECT_EQ(got.status, 200);
  EXPECT_EQ(Drain(got), content_);

  // Removing alice (through the API, as `archil users remove` does) ends her links only.
  ApiResponse removed =
      Call("DELETE", "/api/disks/" + disk_.str() + "/users/" + alice->user.identifier, "");
  ASSERT_LT(removed.status, 300) << removed.body;
  ApiResponse gone = Call("GET", "/api/share/" + by_alice, "", false);
  EXPECT_EQ(gone.status, 410) << gone.body;
  EXPECT_NE(gone.body.find("disk token"), std::string::npos) << gone.body;
  EXPECT_EQ(Call("HEAD", "/api/share/" + by_alice, "", false).status, 410);
  EXPECT_EQ(Call("GET", "/api/share/" + by_bob, "", false).status, 200);
  EXPECT_EQ(Call("GET", "/api/share/" + by_key, "", false).status, 200);
  // Her token no longer makes links.
  EXPECT_EQ(ShareAs(router_.get(), alice->token, disk_, "dir/f").status, 401);

  // Bob's link expires at its second like any other.
  clock_.Advance(int64_t{600} * 1'000'000);
  EXPECT_EQ(Call("GET", "/api/share/" + by_bob, "", false).status, 410);
}

// A disk token opens its own lineage only: another disk's token is 403 whether or not the disk
// it names exists; a revoked or made-up token is 401; a disk token is still no API key.
TEST_F(ShareLinksTest, ADiskTokenOfAnotherDiskIsRefused) {
  CreateDiskRequest create;
  create.name = "other";
  Result<CreatedDisk> other = service_->CreateDisk(create);
  ASSERT_TRUE(other.ok());
  store_.disks[other->disk.id] = LineageView{other->disk.id, std::nullopt, false};
  files_.files[other->disk.id.str() + "/dir/f"] = {"other", 0};
  Result<CreatedUser> mine = service_->AddDiskUser(disk_.str(), "mine");
  ASSERT_TRUE(mine.ok());

  ApiResponse wrong = ShareAs(router_.get(), other->token, disk_, "dir/f");
  EXPECT_EQ(wrong.status, 403) << wrong.body;
  EXPECT_NE(wrong.body.find("another disk"), std::string::npos) << wrong.body;
  Result<DiskId> nowhere = DiskId::Generate();
  ASSERT_TRUE(nowhere.ok());
  ApiResponse unknown = ShareAs(router_.get(), other->token, *nowhere, "dir/f");
  EXPECT_EQ(unknown.status, 403) << unknown.body;
  EXPECT_EQ(json::parse(unknown.body), json::parse(wrong.body));  // nothing told apart
  // Its own disk works.
  EXPECT_EQ(ShareAs(router_.get(), other->token, other->disk.id, "dir/f").status, 200);

  // A made-up secret for a real id, and a made-up id: 401, like any bad credential.
  std::string forged = mine->token;
  forged.back() = forged.back() == '0' ? '1' : '0';
  EXPECT_EQ(ShareAs(router_.get(), forged, disk_, "dir/f").status, 401);
  EXPECT_EQ(
      ShareAs(router_.get(), "adt_0123456789abcdef_" + std::string(48, '0'), disk_, "dir/f").status,
      401);
  // The disk token opens nothing else of the control plane.
  EXPECT_EQ(CallAs(mine->token, "GET", "/api/disks", "").status, 403);
  EXPECT_EQ(CallAs(mine->token, "POST", "/api/share-key/rotate", "").status, 403);
  EXPECT_EQ(CallAs(mine->token, "GET", "/api/disks/" + disk_.str() + "/users", "").status, 403);
  EXPECT_EQ(CallAs(mine->token, "GET", "/api/disks/" + disk_.str() + "/share", "").status, 405);
}

// A branch's links are made with its root's tokens (as a mount of the branch authenticates), and
// end when that user is removed from the root.
TEST_F(ShareLinksTest, ARootsDiskTokenMakesLinksOfItsBranches) {
  Result<DiskId> branch = DiskId::Generate();
  ASSERT_TRUE(branch.ok());
  store_.disks[*branch] = LineageView{disk_, disk_, false};
  files_.files[branch->str() + "/dir/f"] = {"branch bytes", 0};
  Result<CreatedUser> user = service_->AddDiskUser(disk_.str(), "ci");
  ASSERT_TRUE(user.ok());
  ApiResponse made = ShareAs(router_.get(), user->token, *branch, "dir/f");
  ASSERT_EQ(made.status, 200) << made.body;
  const std::string token = TokenOf(made);
  ApiResponse got = Call("GET", "/api/share/" + token, "", false);
  EXPECT_EQ(got.status, 200);
  EXPECT_EQ(Drain(got), "branch bytes");
  ASSERT_TRUE(service_->RemoveDiskUser(branch->str(), user->user.identifier).ok());
  EXPECT_EQ(Call("GET", "/api/share/" + token, "", false).status, 410);
}

// A disk token makes links only from where it may mount: the disk's allowed client addresses
// (the root's, for a branch). An API key is not bound by them, as for every API route.
TEST_F(ShareLinksTest, ADiskTokenMakesLinksOnlyFromAnAllowedAddress) {
  Result<CreatedUser> user = service_->AddDiskUser(disk_.str(), "ci");
  ASSERT_TRUE(user.ok());
  ASSERT_TRUE(service_->SetAllowedIps(disk_.str(), {"10.0.0.0/8"}).ok());
  auto share_from = [&](const std::string& credential, const std::string& peer) {
    ApiRequest r;
    r.method = "POST";
    r.path = "/api/disks/" + disk_.str() + "/share";
    r.authorization = "Bearer " + credential;
    r.host = "files.example:8420";
    r.peer = peer;
    r.body = R"({"key": "dir/f"})";
    return router_->Handle(r);
  };
  EXPECT_EQ(share_from(user->token, "10.1.2.3").status, 200);
  EXPECT_EQ(share_from(user->token, "::ffff:10.1.2.3").status, 200);  // v4-mapped
  ApiResponse outside = share_from(user->token, "192.168.1.7");
  EXPECT_EQ(outside.status, 403) << outside.body;
  EXPECT_NE(outside.body.find("allowed client addresses"), std::string::npos) << outside.body;
  EXPECT_EQ(share_from(user->token, "").status, 403);  // unknown: not covered
  EXPECT_EQ(share_from(key_, "192.168.1.7").status, 200);
  // An empty list allows any address again.
  ASSERT_TRUE(service_->SetAllowedIps(disk_.str(), {}).ok());
  EXPECT_EQ(share_from(user->token, "192.168.1.7").status, 200);
}

TEST(LoggablePath, HidesAShareTokenOnly) {
  EXPECT_EQ(LoggablePath("/api/share/AQAAAABpVZnQ"), "/api/share/{token}");
  EXPECT_EQ(LoggablePath("/api/disks/dsk-1/share"), "/api/disks/dsk-1/share");
  EXPECT_EQ(LoggablePath("/api/share-key/rotate"), "/api/share-key/rotate");
}

}  // namespace
}  // namespace archil
