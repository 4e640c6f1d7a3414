// LineageStore: a disk's checkpoints and branches, as the control plane asks for them.
//
// The storage engine holds them and is their only truth (docs/adr/0014-branches-in-the-engine.md):
// the catalog has a row for each lineage root and none for branches. A branch is a disk of its
// own (it mounts, takes checkpoints and has branches); the root's tokens cover all of them.
// `apps/archil-server` implements this over the engine; unit tests use a fake.
//
// Errors: NotFound for an unknown disk, checkpoint or branch; AlreadyExists for a name taken;
// FailedPrecondition for a checkpoint that is not committed; InvalidArgument for bad names.
//
// Thread-safety: implementations are safe for concurrent use.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/ids.h"
#include "base/status.h"

namespace archil {

struct CheckpointView {
  std::string name;
  bool committed = true;
  int64_t created_at = 0;  // microseconds since the epoch
};

struct BranchView {
  DiskId disk;    // the branch's own disk id
  DiskId parent;  // the disk (root or branch) whose checkpoint it was made from
  std::string name;
  std::string from_checkpoint;
  int64_t created_at = 0;  // microseconds since the epoch
  bool hidden = false;     // deleted, kept because branches of its own read through it
};

struct LineageView {
  DiskId root;                   // the lineage's root: the disk with a catalog row
  std::optional<DiskId> parent;  // absent for the root
  bool hidden = false;
};

struct NewBranch {
  DiskId parent;
  std::string checkpoint;  // a checkpoint of `parent`
  DiskId child;            // a fresh id for the branch (unused if a retry finds the first one)
  std::string name;
  std::string idempotency_key;  // may be empty
};

struct BranchResult {
  BranchView branch;
  bool created = false;  // false: an earlier request with the same Idempotency-Key made it
};

class LineageStore {
 public:
  virtual ~LineageStore() = default;

  // Where `disk` sits; hidden disks included. NotFound if the store has no such disk.
  virtual Result<LineageView> Lineage(const DiskId& disk) = 0;
  // Oldest first.
  virtual Result<std::vector<CheckpointView>> Checkpoints(const DiskId& disk) = 0;
  // Frees what only the checkpoint held. NotFound if it is unknown.
  virtual Status DeleteCheckpoint(const DiskId& disk, std::string_view name) = 0;
  // One durable commit, O(1) in the disk's size.
  virtual Result<BranchResult> CreateBranch(const NewBranch& request) = 0;
  // Every branch of the lineage `disk` belongs to, oldest first.
  virtual Result<std::vector<BranchView>> Branches(const DiskId& disk) = 0;
  // Ends the disk's sessions and deletes it (a root or a branch); hidden instead if it has
  // branches, and a hidden parent left without branches goes with it. NotFound if unknown.
  virtual Status DeleteDisk(const DiskId& disk) = 0;
};

}  // namespace archil
