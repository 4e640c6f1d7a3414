// ControlService: the control plane's operations, independent of HTTP and JSON.
//
// It validates input, issues credentials (keeping only their hashes) and calls the Catalog.
// The HTTP layer (api_router.h) parses requests into these calls and renders the results.
//
// Thread-safety: safe for concurrent use (the Catalog serialises what must be serialised).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "base/clock.h"
#include "base/status.h"
#include "catalog/catalog.h"
#include "catalog/events.h"
#include "control/disk_files.h"
#include "control/disk_search.h"
#include "control/key_cache.h"
#include "control/lineage_store.h"
#include "control/share_token.h"

namespace archil {

struct CreateDiskRequest {
  std::string name;
  RootAttrs root;  // defaults when the request has no rootAttrs
};

struct CreatedDisk {
  Disk disk;
  bool created = false;  // false: an identical disk existed (idempotent create)
  std::string token;     // the first user's disk token; empty unless created
};

struct CreatedUser {
  DiskUser user;
  std::string token;  // shown once
};

struct CreateBranchRequest {
  std::string disk_id;  // the disk (root or branch) the request names
  std::string name;
  std::string from_checkpoint;
  std::string from_branch;      // the branch holding the checkpoint; "" = disk_id itself
  std::string idempotency_key;  // "" = none
};

// The credential a share link is made with, and that ends it when it goes (AuthenticateShare).
struct ShareCredential {
  ShareMaker kind = ShareMaker::kApiKey;
  std::string id;  // the API key's id, or the disk user's identifier
};

struct ShareLink {
  std::string token;  // for GET /api/share/{token}
  uint64_t expires_in = 0;
};

struct CreatedApiKey {
  ApiKey key;
  std::string token;  // shown once
};

class ControlService {
 public:
  // `events` (may be null) hears of deleted disks and removed disk tokens once they are durable.
  // `lineage` (may be null: no checkpoints or branches) holds checkpoints and branches.
  ControlService(Catalog* catalog, const Clock* clock, std::string region,
                 CatalogListener* events = nullptr, LineageStore* lineage = nullptr);

  // The API key named by an Authorization header value. Unauthenticated when missing, malformed,
  // unknown or revoked; PermissionDenied when it is a valid disk token (which can only mount).
  Result<ApiKey> Authenticate(std::string_view authorization) const;

  Result<CreatedDisk> CreateDisk(const CreateDiskRequest& request);
  // A root disk, or a branch (its own id, the root's name, users and settings, `branch` set).
  Result<Disk> GetDisk(std::string_view id) const;
  Result<Page<Disk>> ListDisks(const PageRequest& page, std::string_view name) const;
  // A root with branches is hidden: gone from lists and mounts, its name free, its tokens kept
  // for the branches, which keep working; it goes with its last branch. A branch id deletes
  // that branch. Returns how many branches keep the deleted disk (0: it is going for good).
  Result<size_t> DeleteDisk(std::string_view id);

  // ---- checkpoints and branches (control/lineage_store.h); Unavailable without a data plane.
  // `branch` names a branch of the disk's lineage; "" = the disk `disk_id` itself.
  Result<std::vector<CheckpointView>> ListCheckpoints(std::string_view disk_id,
                                                      std::string_view branch);
  Status DeleteCheckpoint(std::string_view disk_id, std::string_view branch, std::string_view name);
  Result<BranchResult> CreateBranch(const CreateBranchRequest& request);
  // Live branches first by age, hidden ones marked.
  Result<std::vector<BranchView>> ListBranches(std::string_view disk_id);
  Result<BranchView> GetBranch(std::string_view disk_id, std::string_view name);
  Status DeleteBranch(std::string_view disk_id, std::string_view name);

  // ---- disk users (disk tokens). A lineage's tokens are its root's: `disk_id` may be the root
  // (live, or deleted and kept hidden for its branches) or any live branch of it, and each call
  // acts on the root's users. NotFound for any other id (unknown, deleted for good, a hidden
  // branch). A removed token is announced to `events` (its sessions end, on every disk of the
  // lineage) with the root's id.
  Result<std::vector<DiskUser>> ListDiskUsers(std::string_view disk_id) const;
  Result<CreatedUser> AddDiskUser(std::string_view disk_id, std::string_view nickname);
  Status RemoveDiskUser(std::string_view disk_id, std::string_view identifier);

  // ---- allowed client addresses: like the users, a lineage's list is its root's, and
  // `disk_id` may be the root (live or kept) or any live branch. SetAllowedIps parses each entry
  // (base/ip_range.h: InvalidArgument naming it), drops repeats of an entry already listed
  // (after normalization), refuses more than kMaxAllowedIps, stores the list and announces it
  // to `events` with the root's id (sessions from addresses it leaves out end). Returns the
  // list as stored.
  Result<std::vector<IpRange>> GetAllowedIps(std::string_view disk_id) const;
  Result<std::vector<IpRange>> SetAllowedIps(std::string_view disk_id,
                                             const std::vector<std::string>& entries);

  // ---- grep (control/disk_search.h); Unavailable without a data plane. `branch` as above.
  // The searcher is set once, before the API serves (`search` outlives this).
  void set_search(DiskSearch* search) { search_ = search; }
  Result<GrepAnswer> Grep(std::string_view disk_id, std::string_view branch,
                          const GrepQuery& query);

  // ---- share links (docs/api.md "Share links"); Unavailable without a data plane. The file
  // reader is set once, before the API serves (`files` outlives this).
  void set_files(DiskFiles* files) { files_ = files; }
  // Who may make links of disk `disk_id` (a root or a branch): an API key (see Authenticate), or
  // a disk token of the disk's lineage (its root's tokens, as a mount accepts them).
  // Unauthenticated for an unknown, revoked or malformed credential; PermissionDenied for a
  // valid disk token of another disk (whether or not `disk_id` exists, so a token learns
  // nothing about other disks).
  // For a disk token, also PermissionDenied from a client address `peer` ("" = unknown) that the
  // disk's allowed client addresses (if it has any) do not cover: a mount from there is refused.
  Result<ShareCredential> AuthenticateShare(std::string_view authorization,
                                            std::string_view disk_id,
                                            std::string_view peer = "") const;
  // A link to the regular file `path` of the disk (or its branch `branch`, as above), made by
  // `by` (AuthenticateShare), valid for `expires_in` seconds (1..wire::kMaxShareSeconds).
  // InvalidArgument for a bad path (empty, ".", "..", over kMaxSharePathBytes); NotFound for an
  // unknown disk or a path that is not a regular file.
  Result<ShareLink> CreateShareLink(const ShareCredential& by, std::string_view disk_id,
                                    std::string_view branch, std::string_view path,
                                    uint64_t expires_in);
  // The file a link names, opened for reading. NotFound for a token the current share key did
  // not sign (forged, damaged, or from before a rotation) and for a file no longer there (or no
  // longer a regular file); Stale once it has expired, once the credential that made it is gone
  // (its API key deleted, its disk user removed) or its disk was deleted.
  Result<std::unique_ptr<FileReader>> OpenShareLink(std::string_view token);
  // Replaces the share key: every link made so far stops working.
  Status RotateShareKey();

  Result<CreatedApiKey> CreateApiKey(std::string_view name, std::string_view description);
  Result<Page<ApiKey>> ListApiKeys(const PageRequest& page) const;
  Status DeleteApiKey(std::string_view id);

  // First start: if the catalog has no API key, issues one named "admin", hands its token to
  // `persist` (which writes DATA_DIR/admin-api-key durably) and only then stores its hash, so a
  // crash in between leaves no key nobody knows. Returns whether a key was issued. With
  // `recovered` (the catalog came back from the bucket into a new data directory, whose key
  // file is gone), a new admin key is issued beside the restored ones.
  Result<bool> BootstrapAdminKey(const std::function<Status(const std::string& token)>& persist,
                                 bool recovered = false);

  const std::string& region() const { return region_; }
  // OK, or Unavailable when the catalog has been busy with one operation for over
  // `stalled_after_ms` (a commit waiting that long for its fsync: the disk under it is stalled).
  Status Health(int64_t stalled_after_ms = 5000) const;

 private:
  Result<LineageStore*> Lineages() const;
  // The lineage root whose catalog row holds the users of `disk_id` (see ListDiskUsers).
  Result<DiskId> UsersRoot(std::string_view disk_id) const;
  // The disk `disk_id`, or the branch `branch` of its lineage; with its lineage.
  Result<DiskId> ResolveBranch(std::string_view disk_id, std::string_view branch) const;
  // A kept root with no disk left in the lineage store loses its catalog row.
  void SettleKeptRoot(const DiskId& root);
  // A new disk's engine tree (events_), made after the reply (control/after_reply.h).
  void MakeEngineCopy(const Disk& disk);

  Catalog* const catalog_;
  const Clock* const clock_;
  const std::string region_;
  CatalogListener* const events_;
  LineageStore* const lineage_;
  DiskSearch* search_ = nullptr;
  DiskFiles* files_ = nullptr;
  mutable KeyCache keys_;  // verified API keys (control/key_cache.h)
};

// Validates a limit given by a client: 1..100; absent means 50.
Result<uint32_t> ValidatePageLimit(std::optional<uint64_t> limit);

}  // namespace archil
