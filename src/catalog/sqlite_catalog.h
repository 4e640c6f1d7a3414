// The embedded Catalog: one SQLite database file.
//
// Durability: WAL journal with synchronous=FULL, so a commit is on disk (fsync of the WAL) before
// the call returns: an acknowledged create or delete must survive power loss. One connection serves
// every call under a mutex: SQLite allows one writer anyway, and control-plane reads take
// microseconds.
//
// Schema and versioning: docs/api.md#catalog.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <string>

#include "base/mutex.h"
#include "catalog/catalog.h"

struct sqlite3;
struct sqlite3_stmt;

namespace archil {

class SqliteCatalog final : public Catalog {
 public:
  // Opens or creates the database at `path` (":memory:" for tests) and migrates its schema.
  // Fails with Corruption if the file is not a catalog of a known schema version.
  static Result<std::unique_ptr<SqliteCatalog>> Open(const std::string& path);
  ~SqliteCatalog() override;

  Result<CreateDiskResult> CreateDisk(const Disk& disk, const DiskUser& first_user) override;
  Result<Disk> GetDisk(const DiskId& id) override;
  Result<Page<Disk>> ListDisks(const PageRequest& page, std::string_view name) override;
  Status MarkDiskDeleting(const DiskId& id, bool keep_for_branches) override;
  Status KeepDiskForBranches(const DiskId& id) override;
  Result<std::vector<DiskId>> DisksToPurge() override;
  Result<std::vector<DiskId>> DisksKeptForBranches() override;
  Result<Disk> GetLineageRoot(const DiskId& id) override;
  Status PurgeDisk(const DiskId& id) override;
  Status AddDiskUser(const DiskUser& user) override;
  Status RemoveDiskUser(const DiskId& disk_id, std::string_view identifier) override;
  Result<DiskUser> GetDiskUser(std::string_view identifier) override;
  Status SetAllowedIps(const DiskId& disk_id, const std::vector<IpRange>& allowed) override;
  Status AddApiKey(const ApiKey& key) override;
  Result<ApiKey> GetApiKey(std::string_view id) override;
  Result<Page<ApiKey>> ListApiKeys(const PageRequest& page) override;
  Status DeleteApiKey(std::string_view id) override;
  Result<int64_t> CountApiKeys() override;
  Result<Counts> Count() override;
  Result<std::string> ShareKey() override;
  Status RotateShareKey(int64_t now) override;

  // How long the operation now holding the catalog has run (0 when none does): a commit that
  // waits seconds for its fsync is a stalled disk, which /api/health reports.
  int64_t BusyNs() const override;

  // A consistent copy of the whole catalog in a new file `path` (VACUUM INTO), for the copy kept
  // in the object store (docs/tiering.md §13). AlreadyExists if `path` exists. The copy is not
  // synced: the caller fsyncs it or uploads it.
  Status BackupTo(const std::string& path);
  // How many rows every write so far changed, since the catalog was opened: a backup is needed
  // only when this moved since the last one.
  uint64_t WriteCount();
  // The schema version this build writes (recorded with the catalog's copies in the bucket).
  static int SchemaVersion();

  // The value of a durability setting on the catalog's connection, as SQLite reports it
  // ("synchronous" -> "2" for FULL, "journal_mode" -> "wal"), for diagnostics and tests.
  // InvalidArgument for any other pragma.
  Result<std::string> Pragma(std::string_view name);

 private:
  class Stmt;
  class Txn;
  class Held;
  // A connection and its statement cache: the writer's (Writer(), under mu_) or the reader's
  // (inside Read(), under reader_mu_). Whoever holds one holds that connection's mutex.
  struct Conn {
    sqlite3* db;
    std::map<std::string, sqlite3_stmt*>* statements;
  };
  explicit SqliteCatalog(sqlite3* db) : db_(db) {}
  // Opens the second, read-only connection that credential lookups and Read() use, so that they
  // never wait behind a write's fsync (WAL readers do not block on the writer). None for
  // ":memory:" (another connection would see another database): lookups then use db_.
  Status OpenReader(const std::string& path);
  // Runs the statement `sql` through `read` on the reader (on db_ when there is none).
  template <typename T, typename ReadRow>
  Result<T> Lookup(const std::string& sql, const ReadRow& read) ARCHIL_EXCLUDES(mu_, reader_mu_);
  // Runs `read(Conn)` in one read transaction on the reader (every statement sees the same
  // commit, and none waits for a write's fsync), or under mu_ on db_ when there is no reader.
  template <typename T, typename ReadFn>
  Result<T> Read(const ReadFn& read) ARCHIL_EXCLUDES(mu_, reader_mu_);
  Conn Writer() ARCHIL_REQUIRES(mu_) { return {db_, &statements_}; }
  Status Migrate() ARCHIL_REQUIRES(mu_);
  Status PreallocateWal(const std::string& wal_path) ARCHIL_REQUIRES(mu_);
  Status Exec(const char* sql) ARCHIL_REQUIRES(mu_);
  // Inserts the share key's one row, random (schema version 4).
  Status AddShareKey() ARCHIL_REQUIRES(mu_);
  // PRAGMA quick_check at open: Corruption naming the first problems, so that a damaged catalog
  // stops the server at start instead of failing requests later.
  Status QuickCheck() ARCHIL_REQUIRES(mu_);
  // Reads on `c` (REQUIRES: its connection's mutex held, as Conn says).
  static Result<std::vector<DiskUser>> UsersOf(Conn c, const DiskId& disk_id);
  static Result<Disk> LiveDiskWhere(Conn c, const char* column, std::string_view value);
  // GetLineageRoot on `c`.
  static Result<Disk> LineageRootRow(Conn c, const DiskId& id);
  Result<std::vector<DiskId>> DeletingDisks(bool kept) ARCHIL_EXCLUDES(mu_);

  Mutex mu_;
  sqlite3* const db_ ARCHIL_PT_GUARDED_BY(mu_);
  // Prepared statements by SQL text, reused across calls (parsing cost more than running them).
  std::map<std::string, sqlite3_stmt*> statements_ ARCHIL_GUARDED_BY(mu_);
  // steady_clock nanoseconds at which the current holder of mu_ took it (Held); 0 when free.
  std::atomic<int64_t> held_since_ns_{0};

  Mutex reader_mu_;
  sqlite3* reader_ ARCHIL_PT_GUARDED_BY(reader_mu_) = nullptr;
  std::map<std::string, sqlite3_stmt*> reader_statements_ ARCHIL_GUARDED_BY(reader_mu_);
};

}  // namespace archil
