// Catalog: the control plane's durable records (disks, disk users, API keys).
//
// SQLite is the embedded implementation (sqlite_catalog.h); PostgreSQL comes later behind the same
// interface. Every mutating call is one durable transaction: when it returns OK the change
// survives a crash or power loss.
//
// Thread-safety: implementations are safe for concurrent use.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "catalog/model.h"

namespace archil {

// Bytes of the share-link signing key (HMAC-SHA256).
inline constexpr size_t kShareKeyBytes = 32;

struct CreateDiskResult {
  Disk disk;     // as stored, with its users
  bool created;  // false: a live disk of that name with the same settings already existed
};

class Catalog {
 public:
  virtual ~Catalog() = default;

  // Creates `disk` with `first_user` in one transaction. If a live (not deleting) disk named
  // disk.name exists: same root attributes -> returns it with created=false and stores nothing;
  // different ones -> AlreadyExists. Concurrent creates of one name yield exactly one disk.
  // REQUIRES: disk.id unused; first_user.disk_id == disk.id.
  virtual Result<CreateDiskResult> CreateDisk(const Disk& disk, const DiskUser& first_user) = 0;

  // A live disk by id, with its users. NotFound for unknown or deleting disks.
  virtual Result<Disk> GetDisk(const DiskId& id) = 0;

  // Live disks in creation order; `name` (if not empty) filters by exact name.
  // InvalidArgument for a cursor this catalog did not produce.
  virtual Result<Page<Disk>> ListDisks(const PageRequest& page, std::string_view name) = 0;

  // Hides a live disk (state deleting: unlisted, its name free) and revokes its users at once;
  // its data is purged later (PurgeDisk). With `keep_for_branches` its users stay valid, for the
  // disk's branches only, and the purger leaves it alone until its last branch is gone.
  // NotFound if it is not live.
  virtual Status MarkDiskDeleting(const DiskId& id, bool keep_for_branches) = 0;
  // A deleting disk whose data turned out to be kept for branches made meanwhile: as above.
  virtual Status KeepDiskForBranches(const DiskId& id) = 0;
  // Ids of disks waiting to be purged (not kept for branches), oldest first.
  virtual Result<std::vector<DiskId>> DisksToPurge() = 0;
  // Ids of deleted disks kept for their branches.
  virtual Result<std::vector<DiskId>> DisksKeptForBranches() = 0;
  // A live disk, or one kept for its branches (state deleting), with its users. NotFound else.
  virtual Result<Disk> GetLineageRoot(const DiskId& id) = 0;
  // Removes a deleting disk's records for good. OK if already gone.
  virtual Status PurgeDisk(const DiskId& id) = 0;

  // Users belong to lineage roots: a live disk, or one kept for its branches (whose users open
  // only its branches, and must stay revocable). NotFound if the disk is neither (unknown, or
  // deleted for good); AlreadyExists if the identifier is taken.
  virtual Status AddDiskUser(const DiskUser& user) = 0;
  // NotFound if the disk is neither live nor kept for its branches, or has no such user.
  virtual Status RemoveDiskUser(const DiskId& disk_id, std::string_view identifier) = 0;
  // A user of a live disk or of one kept for its branches, by credential id (to check a disk
  // token; the caller checks which disk it may open).
  virtual Result<DiskUser> GetDiskUser(std::string_view identifier) = 0;

  // Replaces the allowed client addresses of a lineage root (live, or kept for its branches);
  // NotFound if it is neither. REQUIRES: at most kMaxAllowedIps, no duplicates.
  virtual Status SetAllowedIps(const DiskId& disk_id, const std::vector<IpRange>& allowed) = 0;

  virtual Status AddApiKey(const ApiKey& key) = 0;
  virtual Result<ApiKey> GetApiKey(std::string_view id) = 0;
  virtual Result<Page<ApiKey>> ListApiKeys(const PageRequest& page) = 0;
  // NotFound if unknown; FailedPrecondition if it is the last key, which would lock everyone out
  // of the API.
  virtual Status DeleteApiKey(std::string_view id) = 0;
  virtual Result<int64_t> CountApiKeys() = 0;
  // The key share links are signed with (docs/api.md "Share links"): kShareKeyBytes random
  // bytes, made with the catalog (or its migration to the schema that holds it). Corruption if
  // missing or malformed.
  virtual Result<std::string> ShareKey() = 0;
  // Replaces the share key with new random bytes, at `now` (microseconds since the Unix epoch):
  // every link signed with the old one stops working.
  virtual Status RotateShareKey(int64_t now) = 0;

  // How many rows of each kind the catalog holds (what the server's metrics report).
  struct Counts {
    int64_t disks = 0;           // available
    int64_t deleting_disks = 0;  // deleted, their data not yet purged (the purge backlog)
    int64_t disk_tokens = 0;
    int64_t api_keys = 0;
  };
  virtual Result<Counts> Count() = 0;

  // How long the operation the catalog is busy with has run, in nanoseconds (0 when idle): how a
  // stalled disk under the catalog shows. Catalogs that cannot tell answer 0.
  virtual int64_t BusyNs() const { return 0; }
};

}  // namespace archil
