// The catalog in the bucket (docs/tiering.md §13): copies of the control plane's catalog (disk
// names, token and API-key hashes, users), so that a fresh server can rebuild it before it
// recovers the disks (§6, step 1).
//
// A pass, when the catalog changed since the last copy this process stored (`version`):
//   1. `backup` writes a consistent copy to a new file in `tmp_dir` (SqliteCatalog::BackupTo);
//   2. PUT catalog/snap/<unix_ms:013d>-<n:08x>.sqlite with If-None-Match: *;
//   3. PUT catalog/LATEST (envelope kind 3: {"format","object","size","crc32c","schema"});
//   4. deletes all but the `keep` newest copies (never the one LATEST names).
// A crash between 2 and 3 leaves a copy no pointer names; the next pass's step 4 removes it.
// LATEST is overwritten unconditionally: a lineage's fences (§5) do not cover the catalog yet.
//
// The catalog copies hold credential hashes (SHA-256 of tokens, the API keys' hashes), never a
// credential: the bucket's access policy is the catalog's.
//
// Thread-safety: one thread runs Pass() (or Start()); stats() from any thread.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "base/clock.h"
#include "base/mutex.h"
#include "base/pass_loop.h"
#include "base/status.h"
#include "store/object_store.h"

namespace archil::tier {

struct CatalogShipperOptions {
  store::ObjectStore* store = nullptr;  // REQUIRES: outlives the shipper
  const Clock* clock = nullptr;         // names the copies (its wall time); REQUIRES: outlives
  std::function<uint64_t()> version;    // moves whenever the catalog changes
  std::function<Status(const std::string& path)> backup;  // a consistent copy into a new file
  std::string tmp_dir;  // REQUIRES: exists, on a local file system
  int schema = 0;       // the catalog's schema version, recorded in LATEST
  size_t keep = 3;
  // Whether this server may write the bucket now (null: always): false once it is fenced.
  std::function<bool()> allowed;
  int interval_ms = 1000;
};

struct CatalogShipperStats {
  uint64_t copies = 0;
  uint64_t bytes = 0;
  uint64_t deleted = 0;
  uint64_t failed_passes = 0;
  std::string last_error;
  uint64_t copied_version = 0;  // options.version() of the newest copy stored
};

class CatalogShipper {
 public:
  explicit CatalogShipper(const CatalogShipperOptions& options);
  CatalogShipper(const CatalogShipper&) = delete;
  CatalogShipper& operator=(const CatalogShipper&) = delete;

  Status Pass();
  void Start() { loop_.Start(); }
  void Kick() { loop_.Kick(); }
  CatalogShipperStats stats() const ARCHIL_EXCLUDES(mu_);
  // The catalog has changed since the newest copy, or none is stored yet: a recovery now would
  // miss something. Asks options.version(), which may wait for the catalog; stats() does not.
  bool Behind() const ARCHIL_EXCLUDES(mu_);

 private:
  Status Ship();

  const CatalogShipperOptions options_;
  // Touched by the pass's thread only.
  bool shipped_ = false;
  uint64_t shipped_version_ = 0;
  uint32_t n_ = 0;
  mutable Mutex mu_;
  CatalogShipperStats stats_ ARCHIL_GUARDED_BY(mu_);
  PassLoop loop_;  // last
};

// What LATEST points at.
struct CatalogPointer {
  std::string object;
  uint64_t size = 0;
  uint32_t crc32c = 0;
  int schema = 0;
  bool operator==(const CatalogPointer&) const = default;
};
std::string EncodeCatalogPointer(const CatalogPointer& p);
// Corruption unless it is what EncodeCatalogPointer writes, naming an object under catalog/snap/.
Result<CatalogPointer> DecodeCatalogPointer(std::string_view v);
inline constexpr const char* kCatalogLatestKey = "catalog/LATEST";

// Writes the copy that catalog/LATEST names to `path` (a temporary file, fsync, rename, fsync of
// the directory), after checking its size, CRC-32C and SQLite header. Returns the pointer, or
// NotFound if the store holds no catalog; Corruption if the copy is not what LATEST says.
// REQUIRES: nothing exists at `path` (AlreadyExists otherwise).
Result<CatalogPointer> RestoreCatalog(store::ObjectStore* store, const std::string& path);

}  // namespace archil::tier
