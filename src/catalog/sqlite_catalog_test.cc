#include "catalog/sqlite_catalog.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

namespace archil {
namespace {

namespace fs = std::filesystem;

Disk MakeDisk(const DiskId& id, const std::string& name, RootAttrs root = {}) {
  Disk d;
  d.id = id;
  d.name = name;
  d.region = "local";
  d.root = root;
  d.created_at = 1000;
  return d;
}

DiskUser MakeUser(const std::string& identifier, const DiskId& disk_id) {
  return DiskUser{identifier, disk_id, "token", "default", "abcd", std::string(64, 'f'), 1000};
}

std::string Hex16(int n) {
  char buf[17];
  snprintf(buf, sizeof(buf), "%016x", n);
  return buf;
}

DiskId Id(int n) { return DiskId::Trusted("dsk-" + Hex16(n)); }

class SqliteCatalogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("archil-catalog-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    Reopen();
  }
  void TearDown() override {
    catalog_.reset();
    fs::remove_all(dir_);
  }
  void Reopen() {
    catalog_.reset();
    auto c = SqliteCatalog::Open((dir_ / "catalog.db").string());
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    catalog_ = std::move(c).value();
  }

  fs::path dir_;
  std::unique_ptr<SqliteCatalog> catalog_;
};

TEST_F(SqliteCatalogTest, CreateGetAndIdempotentCreate) {
  auto r = catalog_->CreateDisk(MakeDisk(Id(1), "a"), MakeUser(Hex16(100), Id(1)));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->created);
  EXPECT_EQ(r->disk.users.size(), 1u);

  auto again = catalog_->CreateDisk(MakeDisk(Id(2), "a"), MakeUser(Hex16(101), Id(2)));
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again->created);
  EXPECT_EQ(again->disk.id, Id(1));
  EXPECT_EQ(again->disk.users.size(), 1u);
  EXPECT_EQ(catalog_->GetDisk(Id(2)).status().code(), Status::Code::kNotFound);
  EXPECT_EQ(catalog_->GetDiskUser(Hex16(101)).status().code(), Status::Code::kNotFound);

  auto conflict =
      catalog_->CreateDisk(MakeDisk(Id(3), "a", {1, 1, 0700}), MakeUser(Hex16(102), Id(3)));
  EXPECT_EQ(conflict.status().code(), Status::Code::kAlreadyExists);

  auto got = catalog_->GetDisk(Id(1));
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->name, "a");
  EXPECT_EQ(got->root, RootAttrs{});
  EXPECT_EQ(got->users[0].identifier, Hex16(100));
}

TEST_F(SqliteCatalogTest, ABackupIsAWholeCatalogThatOpens) {
  const uint64_t before = catalog_->WriteCount();
  ASSERT_TRUE(catalog_->CreateDisk(MakeDisk(Id(1), "a"), MakeUser(Hex16(100), Id(1))).ok());
  EXPECT_GT(catalog_->WriteCount(), before);
  const uint64_t written = catalog_->WriteCount();
  ASSERT_TRUE(catalog_->GetDisk(Id(1)).ok());
  EXPECT_EQ(catalog_->WriteCount(), written);  // reads change nothing
  const std::string copy = (dir_ / "copy.db").string();
  ASSERT_TRUE(catalog_->BackupTo(copy).ok());
  EXPECT_EQ(catalog_->BackupTo(copy).code(), Status::Code::kAlreadyExists);
  auto c = SqliteCatalog::Open(copy);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  auto got = (*c)->GetDisk(Id(1));
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->name, "a");
  EXPECT_EQ((*c)->GetDiskUser(Hex16(100))->disk_id, Id(1));
}

// A statement that cannot be prepared (its table was dropped by someone else under a live
// catalog) is an error, not a crash (the statement's cleanup once dereferenced NULL).
TEST_F(SqliteCatalogTest, AStatementThatCannotBePreparedIsAnError) {
  sqlite3* other = nullptr;
  ASSERT_EQ(sqlite3_open((dir_ / "catalog.db").string().c_str(), &other), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(other, "DROP TABLE disk_users", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(other);
  auto r = catalog_->CreateDisk(MakeDisk(Id(1), "a"), MakeUser(Hex16(100), Id(1)));
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.status().ToString().find("disk_users"), std::string::npos) << r.status().ToString();
}

// A catalog with a damaged page is refused at open, naming the problem (it would otherwise fail
// some requests later, or answer them wrongly).
TEST_F(SqliteCatalogTest, ADamagedCatalogIsRefusedAtOpen) {
  for (int i = 0; i < 200; ++i) {
    ASSERT_TRUE(catalog_
                    ->CreateDisk(MakeDisk(Id(1000 + i), "disk-" + std::to_string(i)),
                                 MakeUser(Hex16(5000 + i), Id(1000 + i)))
                    .ok());
  }
  catalog_.reset();  // the last close checkpoints the WAL into the file
  const fs::path db = dir_ / "catalog.db";
  // The root page of disk_users, which opening does not read.
  int root = 0;
  {
    sqlite3* raw = nullptr;
    ASSERT_EQ(sqlite3_open(db.string().c_str(), &raw), SQLITE_OK);
    sqlite3_stmt* st = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(raw, "SELECT rootpage FROM sqlite_master WHERE name='disk_users'",
                                 -1, &st, nullptr),
              SQLITE_OK);
    ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
    root = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(raw);
  }
  ASSERT_GT(root, 1);
  {
    std::fstream f(db, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(root - 1) * 1024);  // its header and cell pointers
    const std::string junk(64, '\x5a');
    f.write(junk.data(), static_cast<std::streamsize>(junk.size()));
  }
  auto c = SqliteCatalog::Open(db.string());
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), Status::Code::kCorruption) << c.status().ToString();
  EXPECT_NE(c.status().message().find("integrity check"), std::string::npos)
      << c.status().ToString();
}

// A write that waits (here for a lock another process holds; in production for a stalled fsync)
// shows in BusyNs, and credential lookups do not wait behind it: they run on the reader.
TEST_F(SqliteCatalogTest, LookupsDoNotWaitBehindAStalledWrite) {
  ASSERT_TRUE(catalog_->AddApiKey({Hex16(1), "admin", "", "abcd", std::string(64, 'a'), 1}).ok());
  ASSERT_TRUE(catalog_->CreateDisk(MakeDisk(Id(1), "a"), MakeUser(Hex16(100), Id(1))).ok());
  EXPECT_EQ(catalog_->BusyNs(), 0);
  sqlite3* other = nullptr;
  ASSERT_EQ(sqlite3_open((dir_ / "catalog.db").string().c_str(), &other), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(other, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);
  std::atomic<bool> written{false};
  std::thread writer([&] {
    // Waits for the other connection's lock (busy_timeout), holding the catalog meanwhile.
    (void)catalog_->AddApiKey({Hex16(2), "ci", "", "efgh", std::string(64, 'b'), 2});
    written = true;
  });
  // The waiting write shows once it has waited (bounded: the writer thread may start late on a
  // loaded machine).
  for (int i = 0; i < 1000 && catalog_->BusyNs() <= 200'000'000; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_FALSE(written);
  EXPECT_GT(catalog_->BusyNs(), 200'000'000) << "the waiting write does not show";
  const auto start = std::chrono::steady_clock::now();
  Result<ApiKey> key = catalog_->GetApiKey(Hex16(1));
  Result<DiskUser> user = catalog_->GetDiskUser(Hex16(100));
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_TRUE(key.ok()) << key.status().ToString();
  EXPECT_TRUE(user.ok()) << user.status().ToString();
  EXPECT_LT(took, std::chrono::milliseconds(1000)) << "a lookup waited for the write";
  EXPECT_FALSE(written);
  ASSERT_EQ(sqlite3_exec(other, "ROLLBACK", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(other);
  writer.join();
  EXPECT_TRUE(written);
  EXPECT_EQ(catalog_->BusyNs(), 0);
  EXPECT_TRUE(catalog_->GetApiKey(Hex16(2)).ok()) << "the reader sees the committed write";
}

TEST_F(SqliteCatalogTest, PaginatesInCreationOrder) {
  for (int i = 0; i < 7; ++i) {
    ASSERT_TRUE(catalog_
                    ->CreateDisk(MakeDisk(Id(50 - i), "d" + std::to_string(i)),
                                 MakeUser(Hex16(200 + i), Id(50 - i)))
                    .ok());
  }
  std::vector<std::string> names;
  PageRequest page{3, ""};
  int pages = 0;
  do {
    auto p = catalog_->ListDisks(page, "");
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    for (const Disk& d : p->items) names.push_back(d.name);
    page.cursor = p->next_cursor;
    ++pages;
  } while (!page.cursor.empty());
  EXPECT_EQ(pages, 3);
  EXPECT_EQ(names, (std::vector<std::string>{"d0", "d1", "d2", "d3", "d4", "d5", "d6"}));

  auto by_name = catalog_->ListDisks({50, ""}, "d4");
  ASSERT_TRUE(by_name.ok());
  ASSERT_EQ(by_name->items.size(), 1u);
  EXPECT_EQ(by_name->items[0].id, Id(46));
  EXPECT_TRUE(by_name->next_cursor.empty());

  for (const char* bad : {"x", "c", "c-1", "c99999999999999999999", "12"}) {
    EXPECT_EQ(catalog_->ListDisks({3, bad}, "").status().code(), Status::Code::kInvalidArgument)
        << bad;
  }
}

TEST_F(SqliteCatalogTest, DeleteHidesRevokesAndFreesTheName) {
  ASSERT_TRUE(catalog_->CreateDisk(MakeDisk(Id(1), "a"), MakeUser(Hex16(1), Id(1))).ok());
  ASSERT_TRUE(catalog_->GetDiskUser(Hex16(1)).ok());
  ASSERT_TRUE(catalog_->MarkDiskDeleting(Id(1), false).ok());
  EXPECT_EQ(catalog_->GetDisk(Id(1)).status().code(), Status::Code::kNotFound);
  EXPECT_EQ(catalog_->GetDiskUser(Hex16(1)).status().code(), Status::Code::kNotFound);
  EXPECT_EQ(catalog_->MarkDiskDeleting(Id(1), false).code(), Status::Code::kNotFound);
  EXPECT_EQ(catalog_->AddDiskUser(MakeUser(Hex16(2), Id(1))).code(), Status::Code::kNotFound);

  auto reuse = catalog_->CreateDisk(MakeDisk(Id(2), "a"), MakeUser(Hex16(3), Id(2)));
  ASSERT_TRUE(reuse.ok());
  EXPECT_TRUE(reuse->created);

  EXPECT_EQ(*catalog_->DisksToPurge(), std::vector<DiskId>{Id(1)});
  ASSERT_TRUE(catalog_->PurgeDisk(Id(1)).ok());
  EXPECT_TRUE(catalog_->DisksToPurge()->empty());
  EXPECT_TRUE(catalog_->PurgeDisk(Id(1)).ok());
  // A live disk is never purged.
  ASSERT_TRUE(catalog_->PurgeDisk(Id(2)).ok());
  EXPECT_TRUE(catalog_->GetDisk(Id(2)).ok());
}

// A deleted disk kept for its branches: unlisted, its name free, not a live disk, not purged,
// but its users still authenticate (they open the branches) until it is purged.
TEST_F(SqliteCatalogTest, ADiskKeptForBranchesKeepsItsUsersOnly) {
  ASSERT_TRUE(catalog_->CreateDisk(MakeDisk(Id(1), "a"), MakeUser(Hex16(1), Id(1))).ok());
  ASSERT_TRUE(catalog_->CreateDisk(MakeDisk(Id(2), "b"), MakeUser(Hex16(2), Id(2))).ok());
  ASSERT_TRUE(catalog_->MarkDiskDeleting(Id(1), true).ok());
  ASSERT_TRUE(catalog_->MarkDiskDeleting(Id(2), false).ok());
  ASSERT_TRUE(catalog_->CreateDisk(MakeDisk(Id(3), "a"), MakeUser(Hex16(3), Id(3)))->created);
  EXPECT_EQ(catalog_->GetDisk(Id(1)).status().code(), Status::Code::kNotFound);
  EXPECT_EQ(catalog_->ListDisks({50, ""}, "")->items.size(), 1u);
  EXPECT_EQ(catalog_->GetDiskUser(Hex16(1))->disk_id, Id(1));
  EXPECT_EQ(catalog_->GetDiskUser(Hex16(2)).status().code(), Status::Code::kNotFound);
  EXPECT_EQ(catalog_->GetLineageRoot(Id(1))->users.size(), 1u);
  EXPECT_EQ(catalog_->GetLineageRoot(Id(2)).status().code(), Status::Code::kNotFound);
  EXPECT_EQ(*catalog_->DisksToPurge(), std::vector<DiskId>{Id(2)});
  EXPECT_EQ(*catalog_->DisksKeptForBranches(), std::vector<DiskId>{Id(1)});
  // The purger found disk 2's data kept for a branch made meanwhile.
  ASSERT_TRUE(catalog_->KeepDiskForBranches(Id(2)).ok());
  EXPECT_TRUE(catalog_->DisksToPurge()->empty());
  EXPECT_EQ(catalog_->KeepDiskForBranches(Id(3)).code(), Status::Code::kNotFound);  // live
  Reopen();
  EXPECT_EQ(catalog_->DisksKeptForBranches()->size(), 2u);
  // The last branch gone: the row goes, and its users with it.
  ASSERT_TRUE(catalog_->PurgeDisk(Id(1)).ok());
  EXPECT_EQ(catalog_->GetDiskUser(Hex16(1)).status().code(), Status::Code::kNotFound);
}

// The users of a disk kept for its branches can still be added and revoked (they open the
// branches, so revoking one must be possible); those of a disk deleted for good cannot.
TEST_F(SqliteCatalogTest, AKeptDisksUsersCanBeAddedAndRevoked) {
  ASSERT_TRUE(catalog_->CreateDisk(MakeDisk(Id(1), "a"), MakeUser(Hex16(1), Id(1))).ok());
  ASSERT_TRUE(catalog_->CreateDisk(MakeDisk(Id(2), "b"), MakeUser(Hex16(2), Id(2))).ok());
  ASSERT_TRUE(catalog_->MarkDiskDeleting(Id(1), true).ok());
  ASSERT_TRUE(catalog_->MarkDiskDeleting(Id(2), false).ok());

  ASSERT_TRUE(catalog_->AddDiskUser(MakeUser(Hex16(3), Id(1))).ok());
  EXPECT_EQ(catalog_->GetDiskUser(Hex16(3))->disk_id, Id(1));
  EXPECT_EQ(catalog_->GetLineageRoot(Id(1))->users.size(), 2u);
  ASSERT_TRUE(catalog_->RemoveDiskUser(Id(1), Hex16(1)).ok());
  EXPECT_EQ(catalog_->GetDiskUser(Hex16(1)).status().code(), Status::Code::kNotFound);
  EXPECT_EQ(catalog_->RemoveDiskUser(Id(1), Hex16(1)).code(), Status::Code::kNotFound);
  EXPECT_EQ(catalog_->GetLineageRoot(Id(1))->users.size(), 1u);
  // Still hidden: not a live disk, not listed.
  EXPECT_EQ(catalog_->GetDisk(Id(1)).status().code(), Status::Code::kNotFound);
  EXPECT_TRUE(catalog_->ListDisks({50, ""}, "")->items.empty());

  EXPECT_EQ(catalog_->AddDiskUser(MakeUser(Hex16(4), Id(2))).code(), Status::Code::kNotFound);
  EXPECT_EQ(catalog_->RemoveDiskUser(Id(2), Hex16(2)).code(), Status::Code::kNotFound);
}

// Writes a catalog as schema version `version` made it at `path`: the tables every version has,
// the disks table with `disks_extra` (the columns that version had beyond version 1's), and one
// live disk, Id(1) named "old".
void WriteOldCatalog(const std::string& path, int version, const std::string& disks_extra) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  const std::string sql =
      "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;"
      "CREATE TABLE disks(seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, name TEXT NOT NULL,"
      " region TEXT NOT NULL, state TEXT NOT NULL CHECK (state IN ('available', 'deleting')),"
      " root_uid INTEGER NOT NULL, root_gid INTEGER NOT NULL, root_mode INTEGER NOT NULL,"
      " created_at INTEGER NOT NULL" +
      disks_extra +
      ");"
      "CREATE UNIQUE INDEX disks_live_name ON disks(name) WHERE state = 'available';"
      "CREATE TABLE disk_users(identifier TEXT PRIMARY KEY, disk_id TEXT NOT NULL REFERENCES"
      " disks(id) ON DELETE CASCADE, type TEXT NOT NULL, nickname TEXT NOT NULL, token_suffix"
      " TEXT NOT NULL, secret_hash TEXT NOT NULL, created_at INTEGER NOT NULL) WITHOUT ROWID;"
      "CREATE INDEX disk_users_disk ON disk_users(disk_id);"
      "CREATE TABLE api_keys(seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, name TEXT NOT"
      " NULL, description TEXT NOT NULL, token_suffix TEXT NOT NULL, secret_hash TEXT NOT NULL,"
      " created_at INTEGER NOT NULL);"
      "INSERT INTO meta VALUES ('schema_version', '" +
      std::to_string(version) +
      "');"
      "INSERT INTO disks(id, name, region, state, root_uid, root_gid, root_mode, created_at)"
      " VALUES ('dsk-0000000000000001', 'old', 'local', 'available', 0, 0, 493, 5);";
  char* err = nullptr;
  ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "");
  sqlite3_close(db);
}

// A catalog made by schema version 1 is migrated in place, keeping its rows.
TEST_F(SqliteCatalogTest, MigratesSchemaVersion1) {
  catalog_.reset();
  const std::string path = (dir_ / "v1.db").string();
  WriteOldCatalog(path, 1, "");
  if (HasFatalFailure()) return;
  auto c = SqliteCatalog::Open(path);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ((*c)->GetDisk(Id(1))->name, "old");
  EXPECT_TRUE((*c)->MarkDiskDeleting(Id(1), true).ok());
  EXPECT_EQ(*(*c)->DisksKeptForBranches(), std::vector<DiskId>{Id(1)});
  EXPECT_TRUE((*c)->GetLineageRoot(Id(1))->allowed_ips.empty());
  c->reset();
  EXPECT_TRUE(SqliteCatalog::Open(path).ok());  // and opens again as the current version
}

// A catalog made by schema version 2 gets the allowed-address column (empty: any address).
TEST_F(SqliteCatalogTest, MigratesSchemaVersion2) {
  catalog_.reset();
  const std::string path = (dir_ / "v2.db").string();
  WriteOldCatalog(path, 2, ", kept_for_branches INTEGER NOT NULL DEFAULT 0");
  if (HasFatalFailure()) return;
  auto c = SqliteCatalog::Open(path);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ((*c)->GetDisk(Id(1))->name, "old");
  EXPECT_TRUE((*c)->GetDisk(Id(1))->allowed_ips.empty());
  ASSERT_TRUE((*c)->SetAllowedIps(Id(1), {*ParseIpRange("10.0.0.0/8")}).ok());
  c->reset();
  c = SqliteCatalog::Open(path);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_EQ((*c)->GetDisk(Id(1))->allowed_ips.size(), 1u);
  EXPECT_EQ((*c)->GetDisk(Id(1))->allowed_ips[0].ToString(), "10.0.0.0/8");
}

// A catalog made by schema version 3 gets a share key of its own, random, which stays.
TEST_F(SqliteCatalogTest, MigratesSchemaVersion3) {
  catalog_.reset();
  const std::string path = (dir_ / "v3.db").string();
  WriteOldCatalog(
      path, 3,
      ", kept_for_branches INTEGER NOT NULL DEFAULT 0, allowed_ips TEXT NOT NULL DEFAULT ''");
  if (HasFatalFailure()) return;
  auto c = SqliteCatalog::Open(path);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ((*c)->GetDisk(Id(1))->name, "old");
  Result<std::string> key = (*c)->ShareKey();
  ASSERT_TRUE(key.ok()) << key.status().ToString();
  EXPECT_EQ(key->size(), kShareKeyBytes);
  EXPECT_NE(*key, std::string(kShareKeyBytes, '\0'));
  c->reset();
  c = SqliteCatalog::Open(path);  // opens again as version 4, with the same key
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(*(*c)->ShareKey(), *key);
}

// Each catalog's share key is its own; rotating it replaces it durably.
TEST_F(SqliteCatalogTest, ShareKeyIsRandomPerCatalogAndRotates) {
  Result<std::string> first = catalog_->ShareKey();
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first->size(), kShareKeyBytes);
  auto other = SqliteCatalog::Open(":memory:");
  ASSERT_TRUE(other.ok());
  EXPECT_NE(*(*other)->ShareKey(), *first);
  ASSERT_TRUE(catalog_->RotateShareKey(2000).ok());
  Result<std::string> second = catalog_->ShareKey();
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->size(), kShareKeyBytes);
  EXPECT_NE(*second, *first);
  catalog_.reset();
  auto reopened = SqliteCatalog::Open((dir_ / "catalog.db").string());
  ASSERT_TRUE(reopened.ok()) << reopened.status().ToString();
  EXPECT_EQ(*(*reopened)->ShareKey(), *second);
}

TEST_F(SqliteCatalogTest, AllowedIpsAreStoredPerLineageRoot) {
  ASSERT_TRUE(catalog_->CreateDisk(MakeDisk(Id(1), "a"), MakeUser(Hex16(1), Id(1))).ok());
  ASSERT_TRUE(catalog_->CreateDisk(MakeDisk(Id(2), "b"), MakeUser(Hex16(2), Id(2))).ok());
  const std::vector<IpRange> list = {*ParseIpRange("10.0.0.0/8"), *ParseIpRange("2001:db8::/32"),
                                     *ParseIpRange("192.168.1.7")};
  ASSERT_TRUE(catalog_->SetAllowedIps(Id(1), list).ok());
  EXPECT_EQ(catalog_->GetDisk(Id(1))->allowed_ips, list);
  EXPECT_TRUE(catalog_->GetDisk(Id(2))->allowed_ips.empty());
  EXPECT_EQ(catalog_->ListDisks({50, ""}, "a")->items.at(0).allowed_ips, list);
  ASSERT_TRUE(catalog_->SetAllowedIps(Id(1), {}).ok());
  EXPECT_TRUE(catalog_->GetDisk(Id(1))->allowed_ips.empty());
  EXPECT_EQ(catalog_->SetAllowedIps(Id(3), list).code(), Status::Code::kNotFound);
  // A disk kept for its branches keeps a settable list; one deleted for good has none.
  ASSERT_TRUE(catalog_->MarkDiskDeleting(Id(1), true).ok());
  ASSERT_TRUE(catalog_->SetAllowedIps(Id(1), list).ok());
  EXPECT_EQ(catalog_->GetLineageRoot(Id(1))->allowed_ips, list);
  ASSERT_TRUE(catalog_->MarkDiskDeleting(Id(2), false).ok());
  EXPECT_EQ(catalog_->SetAllowedIps(Id(2), list).code(), Status::Code::kNotFound);
}

TEST_F(SqliteCatalogTest, DiskUsers) {
  ASSERT_TRUE(catalog_->CreateDisk(MakeDisk(Id(1), "a"), MakeUser(Hex16(1), Id(1))).ok());
  ASSERT_TRUE(catalog_->AddDiskUser(MakeUser(Hex16(2), Id(1))).ok());
  EXPECT_EQ(catalog_->AddDiskUser(MakeUser(Hex16(2), Id(1))).code(), Status::Code::kAlreadyExists);
  EXPECT_EQ(catalog_->GetDisk(Id(1))->users.size(), 2u);
  EXPECT_EQ(catalog_->RemoveDiskUser(Id(9), Hex16(2)).code(), Status::Code::kNotFound);
  ASSERT_TRUE(catalog_->RemoveDiskUser(Id(1), Hex16(2)).ok());
  EXPECT_EQ(catalog_->RemoveDiskUser(Id(1), Hex16(2)).code(), Status::Code::kNotFound);
  EXPECT_EQ(catalog_->GetDiskUser(Hex16(2)).status().code(), Status::Code::kNotFound);
}

TEST_F(SqliteCatalogTest, ApiKeysAndTheLastKeyRule) {
  EXPECT_EQ(*catalog_->CountApiKeys(), 0);
  ASSERT_TRUE(catalog_->AddApiKey({Hex16(1), "admin", "", "abcd", std::string(64, 'a'), 1}).ok());
  ASSERT_TRUE(catalog_->AddApiKey({Hex16(2), "ci", "d", "efgh", std::string(64, 'b'), 2}).ok());
  EXPECT_EQ(catalog_->AddApiKey({Hex16(2), "dup", "", "x", "y", 3}).code(),
            Status::Code::kAlreadyExists);
  auto page = catalog_->ListApiKeys({1, ""});
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->items.size(), 1u);
  EXPECT_EQ(page->items[0].name, "admin");
  page = catalog_->ListApiKeys({1, page->next_cursor});
  EXPECT_EQ(page->items[0].name, "ci");
  EXPECT_EQ(catalog_->DeleteApiKey(Hex16(9)).code(), Status::Code::kNotFound);
  ASSERT_TRUE(catalog_->DeleteApiKey(Hex16(1)).ok());
  EXPECT_EQ(catalog_->DeleteApiKey(Hex16(2)).code(), Status::Code::kFailedPrecondition);
  EXPECT_EQ(catalog_->GetApiKey(Hex16(1)).status().code(), Status::Code::kNotFound);
  EXPECT_EQ(catalog_->GetApiKey(Hex16(2))->description, "d");
}

TEST_F(SqliteCatalogTest, StateSurvivesReopen) {
  ASSERT_TRUE(
      catalog_->CreateDisk(MakeDisk(Id(1), "keep", {7, 8, 0750}), MakeUser(Hex16(1), Id(1))).ok());
  ASSERT_TRUE(catalog_->AddApiKey({Hex16(5), "k", "", "abcd", std::string(64, 'a'), 1}).ok());
  Reopen();
  auto d = catalog_->GetDisk(Id(1));
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->root, (RootAttrs{7, 8, 0750}));
  EXPECT_TRUE(catalog_->GetApiKey(Hex16(5)).ok());
}

// synchronous is a per-connection setting, so it is read through the catalog's own connection;
// journal_mode=wal is persistent, so a fresh connection must see it too.
TEST_F(SqliteCatalogTest, UsesWalWithFullSync) {
  Result<std::string> sync = catalog_->Pragma("synchronous");
  ASSERT_TRUE(sync.ok()) << sync.status().ToString();
  EXPECT_EQ(*sync, "2");  // FULL: the WAL is fsynced at every commit
  EXPECT_EQ(*catalog_->Pragma("journal_mode"), "wal");
  EXPECT_EQ(catalog_->Pragma("writable_schema").status().code(), Status::Code::kInvalidArgument);

  catalog_.reset();
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((dir_ / "catalog.db").c_str(), &db), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &st, nullptr);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)), "wal");
  sqlite3_finalize(st);
  sqlite3_close(db);
}

TEST_F(SqliteCatalogTest, RefusesForeignDatabasesAndUnknownVersions) {
  catalog_.reset();
  std::string other = (dir_ / "other.db").string();
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(other.c_str(), &db), SQLITE_OK);
  sqlite3_exec(db, "CREATE TABLE t(x)", nullptr, nullptr, nullptr);
  sqlite3_close(db);
  EXPECT_EQ(SqliteCatalog::Open(other).status().code(), Status::Code::kCorruption);

  sqlite3_open((dir_ / "catalog.db").c_str(), &db);
  sqlite3_exec(db, "UPDATE meta SET value = '99' WHERE key = 'schema_version'", nullptr, nullptr,
               nullptr);
  sqlite3_close(db);
  auto c = SqliteCatalog::Open((dir_ / "catalog.db").string());
  EXPECT_EQ(c.status().code(), Status::Code::kCorruption);
  EXPECT_NE(c.status().message().find("'99'"), std::string::npos);

  std::string junk = (dir_ / "junk.db").string();
  std::ofstream(junk) << std::string(8192, 'x');
  EXPECT_FALSE(SqliteCatalog::Open(junk).ok());
}

TEST_F(SqliteCatalogTest, ConcurrentCreatesOfOneNameMakeOneDisk) {
  std::atomic<int> created{0};
  std::atomic<int> existing{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 32; ++i) {
    threads.emplace_back([&, i] {
      auto r = catalog_->CreateDisk(MakeDisk(Id(i), "same"), MakeUser(Hex16(i), Id(i)));
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      (r->created ? created : existing)++;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(created.load(), 1);
  EXPECT_EQ(existing.load(), 31);
  EXPECT_EQ(catalog_->ListDisks({100, ""}, "same")->items.size(), 1u);
}

}  // namespace
}  // namespace archil
