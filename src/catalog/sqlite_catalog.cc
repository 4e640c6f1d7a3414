#include "catalog/sqlite_catalog.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>

#include "base/random.h"
#include "base/strings.h"

namespace archil {
namespace {

int64_t SteadyNanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

namespace {

constexpr int kSchemaVersion = 4;

// The WAL is preallocated with written zeros to a size it reaches before the automatic checkpoint
// (1000 pages of 1 KiB plus frame headers) restarts it from the beginning. Then a commit
// overwrites blocks and its fdatasync needs no file-system journal commit for a size change:
// 0.94 instead of 1.38 ms per create on the development VM. SQLite's recovery stops at the first
// frame that fails its checksum, and zeros always do.
constexpr off_t kWalPreallocBytes = 2 << 20;

// Schema version 1. Partial unique index: a name is unique among live disks only, so a deleted
// disk's name can be reused while its data is still being purged.
//
// Shaped for the cost of a durable commit: every page a transaction changes is written to the WAL
// and flushed, and on the development VM a flush after an idle gap costs 0.73 ms for 4 KiB and
// 1.02 ms for 28 KiB (bench/control_plane.sh). So pages are 1 KiB (the catalog is small), seq is a
// plain rowid (AUTOINCREMENT would also rewrite sqlite_sequence), and disk_users is clustered on
// its key: a disk create touches 5 pages (5 KiB) instead of 7 (28 KiB).
constexpr char kSchemaV1[] = R"sql(
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE disks(
  seq INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  name TEXT NOT NULL,
  region TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('available', 'deleting')),
  root_uid INTEGER NOT NULL,
  root_gid INTEGER NOT NULL,
  root_mode INTEGER NOT NULL,
  created_at INTEGER NOT NULL);
CREATE UNIQUE INDEX disks_live_name ON disks(name) WHERE state = 'available';
CREATE TABLE disk_users(
  identifier TEXT PRIMARY KEY,
  disk_id TEXT NOT NULL REFERENCES disks(id) ON DELETE CASCADE,
  type TEXT NOT NULL,
  nickname TEXT NOT NULL,
  token_suffix TEXT NOT NULL,
  secret_hash TEXT NOT NULL,
  created_at INTEGER NOT NULL) WITHOUT ROWID;
CREATE INDEX disk_users_disk ON disk_users(disk_id);
CREATE TABLE api_keys(
  seq INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  name TEXT NOT NULL,
  description TEXT NOT NULL,
  token_suffix TEXT NOT NULL,
  secret_hash TEXT NOT NULL,
  created_at INTEGER NOT NULL);
)sql";

// Schema version 2: a deleted disk whose branches still live keeps its row (state deleting) and
// its users, which then open only its branches (docs/adr/0014-branches-in-the-engine.md).
constexpr char kMigrateV1ToV2[] = R"sql(
ALTER TABLE disks ADD COLUMN kept_for_branches INTEGER NOT NULL DEFAULT 0;
)sql";

// Schema version 3: each disk's allowed client addresses, canonical CIDR text joined by commas
// ("10.0.0.0/8,2001:db8::/32"); empty: any address.
constexpr char kMigrateV2ToV3[] = R"sql(
ALTER TABLE disks ADD COLUMN allowed_ips TEXT NOT NULL DEFAULT '';
)sql";

// Schema version 4: the key share links are signed with (docs/api.md "Share links"), one row, 64
// hex digits; the migration's caller inserts it (AddShareKey), from the kernel's randomness.
constexpr char kMigrateV3ToV4[] = R"sql(
CREATE TABLE share_key(
  one INTEGER PRIMARY KEY CHECK (one = 1),
  secret TEXT NOT NULL,
  rotated_at INTEGER NOT NULL);
)sql";

// A new random share key, as stored.
Result<std::string> NewShareKeyHex() { return SecureRandomHex(kShareKeyBytes); }

Status SqliteError(sqlite3* db, int rc, std::string_view what) {
  std::string msg = std::string(what) + ": " + (db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
  switch (rc & 0xff) {
    case SQLITE_CONSTRAINT:
      return Status::AlreadyExists(msg);
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return Status::Corruption(msg);
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return Status::Unavailable(msg);
    default:
      return Status::IoError(msg);
  }
}

std::string EncodeCursor(int64_t seq) { return "c" + std::to_string(seq); }

Result<int64_t> DecodeCursor(const std::string& cursor) {
  if (cursor.empty()) return int64_t{0};
  std::optional<uint64_t> v;
  if (cursor[0] == 'c') v = ParseUint64(std::string_view(cursor).substr(1));
  if (!v || *v > static_cast<uint64_t>(INT64_MAX)) {
    return Status::InvalidArgument("invalid cursor: pass the nextCursor of a previous page");
  }
  return static_cast<int64_t>(*v);
}

}  // namespace

// A prepared statement from the catalog's cache, reset for reuse on destruction. Bind indexes are
// 1-based, columns 0-based. REQUIRES: the catalog mutex is held for its whole lifetime.
class SqliteCatalog::Stmt {
 public:
  Stmt(SqliteCatalog* c, const std::string& sql) ARCHIL_REQUIRES(c->mu_)
      : Stmt(c->db_, &c->statements_, sql) {}
  Stmt(Conn c, const std::string& sql) : Stmt(c.db, c.statements, sql) {}
  // On another connection (the reader), with its own cache. REQUIRES: the mutex that guards
  // `db` and `cache` is held for the statement's whole lifetime.
  Stmt(sqlite3* db, std::map<std::string, sqlite3_stmt*>* cache, const std::string& sql) : db_(db) {
    auto it = cache->find(sql);
    if (it != cache->end()) {
      stmt_ = it->second;
      rc_ = SQLITE_OK;
      return;
    }
    rc_ = sqlite3_prepare_v3(db_, sql.c_str(), -1, SQLITE_PREPARE_PERSISTENT, &stmt_, nullptr);
    if (rc_ == SQLITE_OK) cache->emplace(sql, stmt_);
  }
  ~Stmt() {
    if (stmt_ == nullptr) return;  // never prepared (sqlite3_clear_bindings(NULL) crashes)
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;

  Status prepared() const {
    return rc_ == SQLITE_OK ? Status::Ok() : SqliteError(db_, rc_, "prepare");
  }
  Stmt& Bind(std::string_view v) {
    sqlite3_bind_text(stmt_, ++next_, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Stmt& Bind(int64_t v) {
    sqlite3_bind_int64(stmt_, ++next_, v);
    return *this;
  }
  // True while a row is available; Status on error.
  Result<bool> Step() {
    int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    return SqliteError(db_, rc, "step");
  }
  // Runs a statement that returns no rows.
  Status Run() {
    Result<bool> r = Step();
    return r.status();
  }
  std::string Text(int col) const {
    const unsigned char* p = sqlite3_column_text(stmt_, col);
    return p ? std::string(reinterpret_cast<const char*>(p),
                           static_cast<size_t>(sqlite3_column_bytes(stmt_, col)))
             : std::string();
  }
  int64_t Int(int col) const { return sqlite3_column_int64(stmt_, col); }

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
  int rc_;
  int next_ = 0;
};

// The catalog mutex, held for one operation, recording since when (BusyNs).
class ARCHIL_SCOPED_CAPABILITY SqliteCatalog::Held {
 public:
  explicit Held(SqliteCatalog* c) ARCHIL_ACQUIRE(c->mu_) : c_(c) {
    c_->mu_.Lock();
    c_->held_since_ns_.store(SteadyNanos(), std::memory_order_relaxed);
  }
  ~Held() ARCHIL_RELEASE() {
    c_->held_since_ns_.store(0, std::memory_order_relaxed);
    c_->mu_.Unlock();
  }
  Held(const Held&) = delete;
  Held& operator=(const Held&) = delete;

 private:
  SqliteCatalog* const c_;
};

// BEGIN IMMEDIATE ... COMMIT; rolls back unless Commit() succeeded. REQUIRES: the catalog mutex
// is held for its whole lifetime (checked where it is constructed; the methods assert it, since
// the analysis cannot tell that the caller's mutex and c_->mu_ are the same).
class SqliteCatalog::Txn {
 public:
  explicit Txn(SqliteCatalog* c) ARCHIL_REQUIRES(c->mu_) : c_(c) {}
  Status Begin() {
    c_->mu_.AssertHeld();
    return c_->Exec("BEGIN IMMEDIATE");
  }
  Status Commit() {
    c_->mu_.AssertHeld();
    ARCHIL_RETURN_IF_ERROR(c_->Exec("COMMIT"));
    done_ = true;
    return Status::Ok();
  }
  ~Txn() {
    c_->mu_.AssertHeld();
    if (!done_) sqlite3_exec(c_->db_, "ROLLBACK", nullptr, nullptr, nullptr);
  }

 private:
  SqliteCatalog* c_;
  bool done_ = false;
};

namespace {

constexpr char kDiskColumns[] =
    "seq, id, name, region, state, root_uid, root_gid, root_mode, created_at, allowed_ips";

// The stored list (canonical text, written by SetAllowedIps). An entry that does not parse
// (damaged storage) becomes ::/128, the unspecified address no peer has: the list fails closed
// rather than losing an entry and perhaps becoming empty, which would allow everyone.
std::vector<IpRange> AllowedIpsFromText(std::string_view text) {
  std::vector<IpRange> out;
  if (text.empty()) return out;
  for (std::string_view part : Split(text, ',')) {
    Result<IpRange> r = ParseIpRange(part);
    out.push_back(r.ok() ? *r : IpRange{false, {}, 128});
  }
  return out;
}

std::string AllowedIpsText(const std::vector<IpRange>& allowed) {
  std::string text;
  for (const IpRange& r : allowed) {
    if (!text.empty()) text += ',';
    text += r.ToString();
  }
  return text;
}

template <typename S>
Disk DiskFromRow(const S& s) {
  Disk d;
  d.id = DiskId::Trusted(s.Text(1));
  d.name = s.Text(2);
  d.region = s.Text(3);
  d.state = s.Text(4) == "available" ? DiskState::kAvailable : DiskState::kDeleting;
  d.root = {static_cast<uint32_t>(s.Int(5)), static_cast<uint32_t>(s.Int(6)),
            static_cast<uint32_t>(s.Int(7))};
  d.created_at = s.Int(8);
  d.allowed_ips = AllowedIpsFromText(s.Text(9));
  return d;
}

// Reads up to `limit` rows of a statement whose first column is `seq` and which asked for
// limit + 1 rows; the extra row only says that there is a next page.
template <typename T, typename S, typename RowFn>
Result<Page<T>> ReadPage(S& s, uint32_t limit, RowFn from_row) {
  Page<T> out;
  int64_t last_seq = 0;
  for (;;) {
    ARCHIL_ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) return out;
    if (out.items.size() == limit) {
      out.next_cursor = EncodeCursor(last_seq);
      return out;
    }
    last_seq = s.Int(0);
    out.items.push_back(from_row(s));
  }
}

template <typename S>
ApiKey KeyFromRow(const S& s) {
  return ApiKey{s.Text(1), s.Text(2), s.Text(3), s.Text(4), s.Text(5), s.Int(6)};
}

}  // namespace

Result<std::unique_ptr<SqliteCatalog>> SqliteCatalog::Open(const std::string& path) {
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(
      path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    Status s = SqliteError(db, rc, "open catalog " + path);
    sqlite3_close(db);
    return s;
  }
  std::unique_ptr<SqliteCatalog> c(new SqliteCatalog(db));
  MutexLock lock(&c->mu_);
  ARCHIL_RETURN_IF_ERROR(c->Exec("PRAGMA busy_timeout = 5000").WithContext("catalog " + path));
  // Takes effect only while the file is still empty (before journal_mode = WAL writes it).
  ARCHIL_RETURN_IF_ERROR(c->Exec("PRAGMA page_size = 1024"));
  // journal_mode returns a row; sqlite3_exec ignores it.
  ARCHIL_RETURN_IF_ERROR(c->Exec("PRAGMA journal_mode = WAL").WithContext("catalog " + path));
  ARCHIL_RETURN_IF_ERROR(c->Exec("PRAGMA synchronous = FULL"));
  ARCHIL_RETURN_IF_ERROR(c->Exec("PRAGMA foreign_keys = ON"));
  ARCHIL_RETURN_IF_ERROR(c->QuickCheck().WithContext("catalog " + path));
  ARCHIL_RETURN_IF_ERROR(c->Migrate().WithContext("catalog " + path));
  if (path != ":memory:") ARCHIL_RETURN_IF_ERROR(c->PreallocateWal(path + "-wal"));
  ARCHIL_RETURN_IF_ERROR(c->OpenReader(path));
  return c;
}

Status SqliteCatalog::PreallocateWal(const std::string& wal_path) {
  // Keep the WAL file when the last connection closes, so a restart starts warm too.
  int persist = 1;
  sqlite3_file_control(db_, "main", SQLITE_FCNTL_PERSIST_WAL, &persist);
  // Under the write lock no other connection appends frames, so zeros go only past the end.
  Txn txn(this);
  ARCHIL_RETURN_IF_ERROR(txn.Begin());
  int fd = open(wal_path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return Status::FromErrno(errno, "open " + wal_path);
  struct stat st {};
  Status s = fstat(fd, &st) == 0 ? Status::Ok() : Status::FromErrno(errno, "stat " + wal_path);
  const std::string zeros(64 * 1024, '\0');
  for (off_t off = st.st_size; s.ok() && off < kWalPreallocBytes;) {
    // A short write (the disk filled up) is retried from where it stopped, so that the error is
    // the one the next write returns (ENOSPC), never a stale errno.
    ssize_t n = pwrite(fd, zeros.data(), zeros.size(), off);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      s = Status::FromErrno(errno, "preallocate " + wal_path);
    } else if (n == 0) {
      s = Status::FromErrno(ENOSPC, "preallocate " + wal_path);
    } else {
      off += n;
    }
  }
  if (s.ok() && st.st_size < kWalPreallocBytes && fdatasync(fd) != 0) {
    s = Status::FromErrno(errno, "fdatasync " + wal_path);
  }
  close(fd);
  ARCHIL_RETURN_IF_ERROR(s);
  return txn.Commit();
}

SqliteCatalog::~SqliteCatalog() {
  for (auto& [sql, stmt] : statements_) sqlite3_finalize(stmt);
  sqlite3_close(db_);
  MutexLock lock(&reader_mu_);
  for (auto& [sql, stmt] : reader_statements_) sqlite3_finalize(stmt);
  sqlite3_close(reader_);
}

int64_t SqliteCatalog::BusyNs() const {
  const int64_t since = held_since_ns_.load(std::memory_order_relaxed);
  return since == 0 ? 0 : std::max<int64_t>(0, SteadyNanos() - since);
}

Status SqliteCatalog::OpenReader(const std::string& path) {
  if (path == ":memory:") return Status::Ok();
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc == SQLITE_OK) rc = sqlite3_busy_timeout(db, 5000);
  if (rc != SQLITE_OK) {
    Status s = SqliteError(db, rc, "open the catalog's reader " + path);
    sqlite3_close(db);
    return s;
  }
  MutexLock lock(&reader_mu_);
  reader_ = db;
  return Status::Ok();
}

Status SqliteCatalog::QuickCheck() {
  // quick_check reads every page (a catalog is small: milliseconds) and answers one row "ok",
  // or rows naming what is wrong.
  std::string problems;
  char* err = nullptr;
  int rc = sqlite3_exec(
      db_, "PRAGMA quick_check(8)",
      [](void* out, int n, char** values, char**) {
        auto* p = static_cast<std::string*>(out);
        if (n > 0 && values[0] != nullptr && std::string_view(values[0]) != "ok") {
          if (!p->empty()) *p += "; ";
          *p += values[0];
        }
        return 0;
      },
      &problems, &err);
  if (rc != SQLITE_OK) {
    std::string what = err ? err : sqlite3_errstr(rc);
    sqlite3_free(err);
    return Status::Corruption("the integrity check could not run: " + what);
  }
  if (!problems.empty()) {
    return Status::Corruption("fails its integrity check (" + problems +
                              "): restore it from a backup");
  }
  return Status::Ok();
}

Status SqliteCatalog::Exec(const char* sql) {
  char* err = nullptr;
  int rc = sqlite3_exec(db_, sql, nullptr, nullptr, &err);
  if (rc == SQLITE_OK) return Status::Ok();
  std::string msg = err ? err : sqlite3_errstr(rc);
  sqlite3_free(err);
  return SqliteError(nullptr, rc, msg);
}

Status SqliteCatalog::Migrate() {
  Txn txn(this);
  ARCHIL_RETURN_IF_ERROR(txn.Begin());
  Stmt has_meta(this, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'meta'");
  ARCHIL_RETURN_IF_ERROR(has_meta.prepared());
  ARCHIL_ASSIGN_OR_RETURN(bool row, has_meta.Step());
  if (!row || has_meta.Int(0) == 0) {
    Stmt any(this, "SELECT count(*) FROM sqlite_master");
    ARCHIL_RETURN_IF_ERROR(any.prepared());
    ARCHIL_ASSIGN_OR_RETURN(row, any.Step());
    if (row && any.Int(0) != 0) {
      return Status::Corruption("database has tables but is not an archil catalog");
    }
    ARCHIL_RETURN_IF_ERROR(Exec(kSchemaV1));
    ARCHIL_RETURN_IF_ERROR(Exec(kMigrateV1ToV2));
    ARCHIL_RETURN_IF_ERROR(Exec(kMigrateV2ToV3));
    ARCHIL_RETURN_IF_ERROR(Exec(kMigrateV3ToV4));
    ARCHIL_RETURN_IF_ERROR(AddShareKey());
    Stmt put(this, "INSERT INTO meta(key, value) VALUES ('schema_version', ?)");
    ARCHIL_RETURN_IF_ERROR(put.prepared());
    ARCHIL_RETURN_IF_ERROR(put.Bind(std::to_string(kSchemaVersion)).Run());
    return txn.Commit();
  }
  Stmt get(this, "SELECT value FROM meta WHERE key = 'schema_version'");
  ARCHIL_RETURN_IF_ERROR(get.prepared());
  ARCHIL_ASSIGN_OR_RETURN(row, get.Step());
  std::string version = row ? get.Text(0) : "";
  if (version == "1") {  // each migration runs in this transaction
    ARCHIL_RETURN_IF_ERROR(Exec(kMigrateV1ToV2));
    Stmt put(this, "UPDATE meta SET value = '2' WHERE key = 'schema_version'");
    ARCHIL_RETURN_IF_ERROR(put.prepared());
    ARCHIL_RETURN_IF_ERROR(put.Run());
    version = "2";
  }
  if (version == "2") {
    ARCHIL_RETURN_IF_ERROR(Exec(kMigrateV2ToV3));
    Stmt put(this, "UPDATE meta SET value = '3' WHERE key = 'schema_version'");
    ARCHIL_RETURN_IF_ERROR(put.prepared());
    ARCHIL_RETURN_IF_ERROR(put.Run());
    version = "3";
  }
  if (version == "3") {
    ARCHIL_RETURN_IF_ERROR(Exec(kMigrateV3ToV4));
    ARCHIL_RETURN_IF_ERROR(AddShareKey());
    Stmt put(this, "UPDATE meta SET value = '4' WHERE key = 'schema_version'");
    ARCHIL_RETURN_IF_ERROR(put.prepared());
    ARCHIL_RETURN_IF_ERROR(put.Run());
    version = "4";
  }
  if (version != std::to_string(kSchemaVersion)) {
    return Status::Corruption("unknown catalog schema version '" + version +
                              "' (this build knows " + std::to_string(kSchemaVersion) + ")");
  }
  return txn.Commit();
}

Status SqliteCatalog::AddShareKey() {
  ARCHIL_ASSIGN_OR_RETURN(std::string secret, NewShareKeyHex());
  Stmt s(this, "INSERT INTO share_key(one, secret, rotated_at) VALUES (1, ?, 0)");
  ARCHIL_RETURN_IF_ERROR(s.prepared());
  return s.Bind(secret).Run();
}

Result<std::vector<DiskUser>> SqliteCatalog::UsersOf(Conn c, const DiskId& disk_id) {
  Stmt s(c,
         "SELECT identifier, disk_id, type, nickname, token_suffix, secret_hash, created_at "
         "FROM disk_users WHERE disk_id = ? ORDER BY created_at, identifier");
  ARCHIL_RETURN_IF_ERROR(s.prepared());
  s.Bind(disk_id.str());
  std::vector<DiskUser> users;
  for (;;) {
    ARCHIL_ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    users.push_back({s.Text(0), DiskId::Trusted(s.Text(1)), s.Text(2), s.Text(3), s.Text(4),
                     s.Text(5), s.Int(6)});
  }
  return users;
}

Result<Disk> SqliteCatalog::LiveDiskWhere(Conn c, const char* column, std::string_view value) {
  std::string sql = std::string("SELECT ") + kDiskColumns + " FROM disks WHERE " + column +
                    " = ? AND state = 'available'";
  Stmt s(c, sql);
  ARCHIL_RETURN_IF_ERROR(s.prepared());
  s.Bind(value);
  ARCHIL_ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row)
    return Status::NotFound("no disk with " + std::string(column) + " '" + std::string(value) +
                            "'");
  Disk d = DiskFromRow(s);
  ARCHIL_ASSIGN_OR_RETURN(d.users, UsersOf(c, d.id));
  return d;
}

Result<CreateDiskResult> SqliteCatalog::CreateDisk(const Disk& disk, const DiskUser& first_user) {
  Held lock(this);
  Txn txn(this);
  ARCHIL_RETURN_IF_ERROR(txn.Begin());
  Result<Disk> existing = LiveDiskWhere(Writer(), "name", disk.name);
  if (existing.ok()) {
    if (existing->root == disk.root) return CreateDiskResult{std::move(existing).value(), false};
    return Status::AlreadyExists("a disk named '" + disk.name +
                                 "' already exists with different rootAttrs");
  }
  if (existing.status().code() != Status::Code::kNotFound) return existing.status();

  Stmt ins(this,
           "INSERT INTO disks(id, name, region, state, root_uid, root_gid, root_mode, created_at) "
           "VALUES (?, ?, ?, 'available', ?, ?, ?, ?)");
  ARCHIL_RETURN_IF_ERROR(ins.prepared());
  ins.Bind(disk.id.str()).Bind(disk.name).Bind(disk.region).Bind(int64_t{disk.root.uid});
  ins.Bind(int64_t{disk.root.gid}).Bind(int64_t{disk.root.mode}).Bind(disk.created_at);
  ARCHIL_RETURN_IF_ERROR(ins.Run().WithContext("insert disk"));
  Stmt user(this,
            "INSERT INTO disk_users(identifier, disk_id, type, nickname, token_suffix, "
            "secret_hash, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)");
  ARCHIL_RETURN_IF_ERROR(user.prepared());
  user.Bind(first_user.identifier)
      .Bind(disk.id.str())
      .Bind(first_user.type)
      .Bind(first_user.nickname);
  user.Bind(first_user.token_suffix).Bind(first_user.secret_hash).Bind(first_user.created_at);
  ARCHIL_RETURN_IF_ERROR(user.Run().WithContext("insert disk user"));
  ARCHIL_RETURN_IF_ERROR(txn.Commit());
  Disk stored = disk;
  stored.state = DiskState::kAvailable;
  stored.users = {first_user};
  stored.users[0].disk_id = disk.id;
  return CreateDiskResult{std::move(stored), true};
}

Result<Disk> SqliteCatalog::GetDisk(const DiskId& id) {
  return Read<Disk>([&](Conn c) { return LiveDiskWhere(c, "id", id.str()); });
}

Result<Page<Disk>> SqliteCatalog::ListDisks(const PageRequest& page, std::string_view name) {
  ARCHIL_ASSIGN_OR_RETURN(int64_t after, DecodeCursor(page.cursor));
  return Read<Page<Disk>>([&](Conn c) -> Result<Page<Disk>> {
    std::string sql = std::string("SELECT ") + kDiskColumns +
                      " FROM disks WHERE state = 'available' AND seq > ?" +
                      (name.empty() ? "" : " AND name = ?") + " ORDER BY seq LIMIT ?";
    Stmt s(c, sql);
    ARCHIL_RETURN_IF_ERROR(s.prepared());
    s.Bind(after);
    if (!name.empty()) s.Bind(name);
    s.Bind(static_cast<int64_t>(page.limit) + 1);
    ARCHIL_ASSIGN_OR_RETURN(Page<Disk> out, ReadPage<Disk>(s, page.limit, DiskFromRow<Stmt>));
    for (Disk& d : out.items) {
      ARCHIL_ASSIGN_OR_RETURN(d.users, UsersOf(c, d.id));
    }
    return out;
  });
}

Status SqliteCatalog::MarkDiskDeleting(const DiskId& id, bool keep_for_branches) {
  Held lock(this);
  Stmt s(this,
         "UPDATE disks SET state = 'deleting', kept_for_branches = ? WHERE id = ? AND "
         "state = 'available'");
  ARCHIL_RETURN_IF_ERROR(s.prepared());
  ARCHIL_RETURN_IF_ERROR(s.Bind(int64_t{keep_for_branches ? 1 : 0}).Bind(id.str()).Run());
  if (sqlite3_changes(db_) == 0) return Status::NotFound("no disk with id '" + id.str() + "'");
  return Status::Ok();
}

Status SqliteCatalog::KeepDiskForBranches(const DiskId& id) {
  Held lock(this);
  Stmt s(this, "UPDATE disks SET kept_for_branches = 1 WHERE id = ? AND state = 'deleting'");
  ARCHIL_RETURN_IF_ERROR(s.prepared());
  ARCHIL_RETURN_IF_ERROR(s.Bind(id.str()).Run());
  if (sqlite3_changes(db_) == 0) return Status::NotFound("no deleted disk '" + id.str() + "'");
  return Status::Ok();
}

Result<std::vector<DiskId>> SqliteCatalog::DeletingDisks(bool kept) {
  Held lock(this);
  Stmt s(this,
         "SELECT id FROM disks WHERE state = 'deleting' AND kept_for_branches = ? ORDER BY seq");
  ARCHIL_RETURN_IF_ERROR(s.prepared());
  s.Bind(int64_t{kept ? 1 : 0});
  std::vector<DiskId> ids;
  for (;;) {
    ARCHIL_ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) return ids;
    ids.push_back(DiskId::Trusted(s.Text(0)));
  }
}

Result<std::vector<DiskId>> SqliteCatalog::DisksToPurge() { return DeletingDisks(false); }

Result<std::vector<DiskId>> SqliteCatalog::DisksKeptForBranches() { return DeletingDisks(true); }

Result<Disk> SqliteCatalog::GetLineageRoot(const DiskId& id) {
  return Read<Disk>([&](Conn c) { return LineageRootRow(c, id); });
}

Result<Disk> SqliteCatalog::LineageRootRow(Conn c, const DiskId& id) {
  Stmt s(c, std::string("SELECT ") + kDiskColumns +
                " FROM disks WHERE id = ? AND (state = 'available' OR kept_for_branches = 1)");
  ARCHIL_RETURN_IF_ERROR(s.prepared());
  s.Bind(id.str());
  ARCHIL_ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return Status::NotFound("no disk with id '" + id.str() + "'");
  Disk d = DiskFromRow(s);
  ARCHIL_ASSIGN_OR_RETURN(d.users, UsersOf(c, d.id));
  return d;
}

Status SqliteCatalog::PurgeDisk(const DiskId& id) {
  Held lock(this);
  Stmt s(this, "DELETE FROM disks WHERE id = ? AND state = 'deleting'");
  ARCHIL_RETURN_IF_ERROR(s.prepared());
  return s.Bind(id.str()).Run();
}

Status SqliteCatalog::AddDiskUser(const DiskUser& user) {
  Held lock(this);
  Txn txn(this);
  ARCHIL_RETURN_IF_ERROR(txn.Begin());
  ARCHIL_RETURN_IF_ERROR(LineageRootRow(Writer(), user.disk_id).status());
  Stmt s(this,
         "INSERT INTO disk_users(identifier, disk_id, type, nickname, token_suffix, secret_hash, "
         "created_at) VALUES (?, ?, ?, ?, ?, ?, ?)");
  ARCHIL_RETURN_IF_ERROR(s.prepared());
  s.Bind(user.identifier).Bind(user.disk_id.str()).Bind(user.type).Bind(user.nickname);
  s.Bind(user.token_suffix).Bind(user.secret_hash).Bind(user.created_at);
  ARCHIL_RETURN_IF_ERROR(s.Run().WithContext("add disk user"));
  return txn.Commit();
}

Status SqliteCatalog::RemoveDiskUser(const DiskId& disk_id, std::string_view identifier) {
  Held lock(this);
  Stmt s(this,
         "DELETE FROM disk_users WHERE identifier = ? AND disk_id = ? AND disk_id IN "
         "(SELECT id FROM disks WHERE state = 'available' OR kept_for_branches = 1)");
  ARCHIL_RETURN_IF_ERROR(s.prepared());
  ARCHIL_RETURN_IF_ERROR(s.Bind(identifier).Bind(disk_id.str()).Run());
  if (sqlite3_changes(db_) == 0) {
    return Status::NotFound("disk '" + disk_id.str() + "' has no user '" + std::string(identifier) +
                            "'");
  }
  return Status::Ok();
}

Status SqliteCatalog::SetAllowedIps(const DiskId& disk_id, const std::vector<IpRange>& allowed) {
  Held lock(this);
  Stmt s(this,
         "UPDATE disks SET allowed_ips = ? WHERE id = ? AND "
         "(state = 'available' OR kept_for_branches = 1)");
  ARCHIL_RETURN_IF_ERROR(s.prepared());
  ARCHIL_RETURN_IF_ERROR(s.Bind(AllowedIpsText(allowed)).Bind(disk_id.str()).Run());
  if (sqlite3_changes(db_) == 0) return Status::NotFound("no disk with id '" + disk_id.str() + "'");
  return Status::Ok();
}

template <typename T, typename ReadFn>
Result<T> SqliteCatalog::Read(const ReadFn& read) {
  {
    MutexLock lock(&reader_mu_);
    if (reader_ != nullptr) {
      if (int rc = sqlite3_exec(reader_, "BEGIN", nullptr, nullptr, nullptr); rc != SQLITE_OK) {
        return SqliteError(reader_, rc, "begin a read");
      }
      Result<T> out = read(Conn{reader_, &reader_statements_});
      // Ends the read transaction; it wrote nothing, so this cannot lose anything.
      sqlite3_exec(reader_, "ROLLBACK", nullptr, nullptr, nullptr);
      return out;
    }
  }
  Held lock(this);
  return read(Writer());
}

template <typename T, typename ReadRow>
Result<T> SqliteCatalog::Lookup(const std::string& sql, const ReadRow& read) {
  {
    // Authentication reads here, on the reader, so that it never waits for a write's fsync.
    MutexLock lock(&reader_mu_);
    if (reader_ != nullptr) {
      Stmt s(reader_, &reader_statements_, sql);
      return read(s);
    }
  }
  Held lock(this);
  Stmt s(this, sql);
  return read(s);
}

Result<DiskUser> SqliteCatalog::GetDiskUser(std::string_view identifier) {
  static const std::string kSql =
      "SELECT u.identifier, u.disk_id, u.type, u.nickname, u.token_suffix, u.secret_hash, "
      "u.created_at FROM disk_users u JOIN disks d ON d.id = u.disk_id "
      "WHERE u.identifier = ? AND (d.state = 'available' OR d.kept_for_branches = 1)";
  return Lookup<DiskUser>(kSql, [&](Stmt& s) -> Result<DiskUser> {
    ARCHIL_RETURN_IF_ERROR(s.prepared());
    s.Bind(identifier);
    ARCHIL_ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) return Status::NotFound("no disk user '" + std::string(identifier) + "'");
    return DiskUser{
        s.Text(0), DiskId::Trusted(s.Text(1)), s.Text(2), s.Text(3), s.Text(4), s.Text(5),
        s.Int(6)};
  });
}

Status SqliteCatalog::AddApiKey(const ApiKey& key) {
  Held lock(this);
  Stmt s(this,
         "INSERT INTO api_keys(id, name, description, token_suffix, secret_hash, created_at) "
         "VALUES (?, ?, ?, ?, ?, ?)");
  ARCHIL_RETURN_IF_ERROR(s.prepared());
  s.Bind(key.id).Bind(key.name).Bind(key.description).Bind(key.token_suffix);
  s.Bind(key.secret_hash).Bind(key.created_at);
  return s.Run().WithContext("add API key");
}

Result<ApiKey> SqliteCatalog::GetApiKey(std::string_view id) {
  static const std::string kSql =
      "SELECT seq, id, name, description, token_suffix, secret_hash, created_at "
      "FROM api_keys WHERE id = ?";
  return Lookup<ApiKey>(kSql, [&](Stmt& s) -> Result<ApiKey> {
    ARCHIL_RETURN_IF_ERROR(s.prepared());
    s.Bind(id);
    ARCHIL_ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) return Status::NotFound("no API key '" + std::string(id) + "'");
    return KeyFromRow(s);
  });
}

Result<Page<ApiKey>> SqliteCatalog::ListApiKeys(const PageRequest& page) {
  ARCHIL_ASSIGN_OR_RETURN(int64_t after, DecodeCursor(page.cursor));
  return Read<Page<ApiKey>>([&](Conn c) -> Result<Page<ApiKey>> {
    Stmt s(c,
           "SELECT seq, id, name, description, token_suffix, secret_hash, created_at "
           "FROM api_keys WHERE seq > ? ORDER BY seq LIMIT ?");
    ARCHIL_RETURN_IF_ERROR(s.prepared());
    s.Bind(after).Bind(static_cast<int64_t>(page.limit) + 1);
    return ReadPage<ApiKey>(s, page.limit, KeyFromRow<Stmt>);
  });
}

Status SqliteCatalog::DeleteApiKey(std::string_view id) {
  Held lock(this);
  Txn txn(this);
  ARCHIL_RETURN_IF_ERROR(txn.Begin());
  Stmt count(this, "SELECT count(*), sum(id = ?) FROM api_keys");
  ARCHIL_RETURN_IF_ERROR(count.prepared());
  count.Bind(id);
  ARCHIL_ASSIGN_OR_RETURN(bool row, count.Step());
  if (!row || count.Int(1) == 0) return Status::NotFound("no API key '" + std::string(id) + "'");
  if (count.Int(0) == 1) {
    return Status::FailedPrecondition(
        "refusing to delete the last API key: create another one first");
  }
  Stmt del(this, "DELETE FROM api_keys WHERE id = ?");
  ARCHIL_RETURN_IF_ERROR(del.prepared());
  ARCHIL_RETURN_IF_ERROR(del.Bind(id).Run());
  return txn.Commit();
}

Result<int64_t> SqliteCatalog::CountApiKeys() {
  Held lock(this);
  Stmt s(this, "SELECT count(*) FROM api_keys");
  ARCHIL_RETURN_IF_ERROR(s.prepared());
  ARCHIL_ASSIGN_OR_RETURN(bool row, s.Step());
  return row ? s.Int(0) : 0;
}

Result<std::string> SqliteCatalog::ShareKey() {
  static const std::string kSql = "SELECT secret FROM share_key WHERE one = 1";
  return Lookup<std::string>(kSql, [&](Stmt& s) -> Result<std::string> {
    ARCHIL_RETURN_IF_ERROR(s.prepared());
    ARCHIL_ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) return Status::Corruption("the catalog has no share key");
    std::string hex = s.Text(0);
    if (!IsLowerHex(hex, 2 * kShareKeyBytes)) {
      return Status::Corruption("the catalog's share key is not 64 hex digits");
    }
    std::string key(kShareKeyBytes, '\0');
    for (size_t i = 0; i < kShareKeyBytes; ++i) {
      key[i] = static_cast<char>(*ParseLowerHex(std::string_view(hex).substr(2 * i, 2), 2));
    }
    return key;
  });
}

Status SqliteCatalog::RotateShareKey(int64_t now) {
  ARCHIL_ASSIGN_OR_RETURN(std::string secret, NewShareKeyHex());
  Held lock(this);
  Stmt s(this, "UPDATE share_key SET secret = ?, rotated_at = ? WHERE one = 1");
  ARCHIL_RETURN_IF_ERROR(s.prepared());
  ARCHIL_RETURN_IF_ERROR(s.Bind(secret).Bind(now).Run());
  if (sqlite3_changes(db_) != 1) return Status::Corruption("the catalog has no share key");
  return Status::Ok();
}

Result<Catalog::Counts> SqliteCatalog::Count() {
  Held lock(this);
  Stmt s(this,
         "SELECT (SELECT count(*) FROM disks WHERE state = 'available'),"
         " (SELECT count(*) FROM disks WHERE state = 'deleting'),"
         " (SELECT count(*) FROM disk_users), (SELECT count(*) FROM api_keys)");
  ARCHIL_RETURN_IF_ERROR(s.prepared());
  ARCHIL_ASSIGN_OR_RETURN(bool row, s.Step());
  Counts c;
  if (row) c = {s.Int(0), s.Int(1), s.Int(2), s.Int(3)};
  return c;
}

Result<std::string> SqliteCatalog::Pragma(std::string_view name) {
  if (name != "synchronous" && name != "journal_mode") {
    return Status::InvalidArgument("not a durability pragma: " + std::string(name));
  }
  Held lock(this);
  Stmt s(this, "PRAGMA " + std::string(name));
  ARCHIL_RETURN_IF_ERROR(s.prepared());
  ARCHIL_ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return Status::Internal("PRAGMA " + std::string(name) + " returned no row");
  return s.Text(0);
}

Status SqliteCatalog::BackupTo(const std::string& path) {
  if (access(path.c_str(), F_OK) == 0) return Status::AlreadyExists(path + " exists");
  Held lock(this);
  Stmt s(this, "VACUUM INTO ?");
  ARCHIL_RETURN_IF_ERROR(s.prepared());
  return s.Bind(path).Run().WithContext("back up the catalog to " + path);
}

uint64_t SqliteCatalog::WriteCount() {
  Held lock(this);
  return static_cast<uint64_t>(sqlite3_total_changes64(db_));
}

int SqliteCatalog::SchemaVersion() { return kSchemaVersion; }

}  // namespace archil
