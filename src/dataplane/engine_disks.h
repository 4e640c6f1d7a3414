// The data plane inside `archil server`: the storage engine and the disk server, tied to the
// control plane's catalog (docs/adr/0010-catalog-and-engine-truth.md).
//
// The catalog is the truth for which disks exist, their names, root attributes and tokens; the
// engine holds each disk's tree. So:
// - a disk created through the API gets its engine tree just after the API answers, written
//   without a sync (the catalog's commit is the acknowledgement); one a crash lost, or a mount
//   that came first, is created by Reconcile at start or by the first mount that finds it missing;
// - a disk deleted through the API ends its sessions at once, and the purger then deletes its
//   engine tree; a revoked token ends the sessions it opened; a changed list of allowed
//   addresses ends the lineage's sessions from the addresses it leaves out;
// - the disk server checks tokens against the catalog (CatalogAuthority); a root's tokens also
//   open its branches;
// - checkpoints and branches live in the engine alone (docs/adr/0014-branches-in-the-engine.md):
//   EngineDisks serves them to the control plane.
//
// EngineDisks: the catalog's events and the control plane's checkpoint and branch calls, carried
// out on the engine and the disk server. Thread-safety: safe for concurrent use.
#pragma once

#include <atomic>

#include "catalog/catalog.h"
#include "catalog/disk_data.h"
#include "catalog/events.h"
#include "control/lineage_store.h"
#include "engine/engine.h"
#include "server/disk_server.h"

namespace archil {

class EngineDisks final : public DiskDataStore, public CatalogListener, public LineageStore {
 public:
  explicit EngineDisks(engine::Engine* engine) : engine_(engine) {}
  // The disk server whose sessions deletions and revocations end (none before it starts).
  void set_server(server::DiskServer* server) { server_ = server; }

  void OnDiskCreated(const Disk& disk) override;
  void OnDiskDeleted(const DiskId& disk) override;
  void OnTokenRevoked(const DiskId& disk, std::string_view token_id) override;
  void OnAllowedIpsChanged(const DiskId& disk, const std::vector<IpRange>& allowed) override;
  Status PurgeDiskData(const DiskId& disk) override;

  Result<LineageView> Lineage(const DiskId& disk) override;
  Result<std::vector<CheckpointView>> Checkpoints(const DiskId& disk) override;
  Status DeleteCheckpoint(const DiskId& disk, std::string_view name) override;
  Result<BranchResult> CreateBranch(const NewBranch& request) override;
  Result<std::vector<BranchView>> Branches(const DiskId& disk) override;
  Status DeleteDisk(const DiskId& disk) override;

 private:
  engine::Engine* const engine_;
  std::atomic<server::DiskServer*> server_{nullptr};
};

// Creates (unsynced) the engine tree of a live catalog disk if the engine has none.
Status EnsureEngineDisk(engine::Engine* engine, const Disk& disk);

}  // namespace archil
