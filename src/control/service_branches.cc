// ControlService: checkpoints and branches (control/lineage_store.h, docs/api.md).
#include "api/names.h"
#include "base/log.h"
#include "control/service.h"

namespace archil {

Result<LineageStore*> ControlService::Lineages() const {
  if (lineage_ == nullptr) {
    return Status::Unavailable(
        "this server has no data plane: checkpoints and branches are "
        "served by the server that holds the disks");
  }
  return lineage_;
}

Result<DiskId> ControlService::ResolveBranch(std::string_view disk_id,
                                             std::string_view branch) const {
  ARCHIL_ASSIGN_OR_RETURN(LineageStore * store, Lineages());
  ARCHIL_ASSIGN_OR_RETURN(DiskId disk, DiskId::Parse(disk_id));
  const Status unknown = Status::NotFound("no disk with id '" + disk.str() + "'");
  Result<LineageView> l = store->Lineage(disk);
  if (!l.ok()) return l.status().code() == Status::Code::kNotFound ? unknown : l.status();
  // A hidden disk is gone for its users; a root must also be live in the catalog.
  if (l->hidden) return unknown;
  if (!l->parent) {
    Result<Disk> root = catalog_->GetDisk(disk);
    if (!root.ok()) return root.status();
  }
  if (branch.empty()) return disk;
  ARCHIL_RETURN_IF_ERROR(ValidateBranchName(branch));
  ARCHIL_ASSIGN_OR_RETURN(std::vector<BranchView> branches, store->Branches(disk));
  for (const BranchView& b : branches) {
    if (b.name == branch && !b.hidden) return b.disk;
  }
  return Status::NotFound("disk '" + disk.str() + "' has no branch '" + std::string(branch) + "'");
}

Result<std::vector<CheckpointView>> ControlService::ListCheckpoints(std::string_view disk_id,
                                                                    std::string_view branch) {
  ARCHIL_ASSIGN_OR_RETURN(DiskId disk, ResolveBranch(disk_id, branch));
  return lineage_->Checkpoints(disk);
}

Status ControlService::DeleteCheckpoint(std::string_view disk_id, std::string_view branch,
                                        std::string_view name) {
  ARCHIL_RETURN_IF_ERROR(ValidateCheckpointName(name));
  ARCHIL_ASSIGN_OR_RETURN(DiskId disk, ResolveBranch(disk_id, branch));
  return lineage_->DeleteCheckpoint(disk, name);
}

Result<BranchResult> ControlService::CreateBranch(const CreateBranchRequest& request) {
  ARCHIL_RETURN_IF_ERROR(ValidateBranchName(request.name));
  ARCHIL_RETURN_IF_ERROR(ValidateCheckpointName(request.from_checkpoint));
  if (!request.idempotency_key.empty()) {
    ARCHIL_RETURN_IF_ERROR(ValidateIdempotencyKey(request.idempotency_key));
  }
  ARCHIL_ASSIGN_OR_RETURN(DiskId parent, ResolveBranch(request.disk_id, request.from_branch));
  NewBranch b;
  b.parent = parent;
  b.checkpoint = request.from_checkpoint;
  ARCHIL_ASSIGN_OR_RETURN(b.child, DiskId::Generate());
  b.name = request.name;
  b.idempotency_key = request.idempotency_key;
  Result<BranchResult> made = lineage_->CreateBranch(b);
  if (!made.ok() && made.status().code() == Status::Code::kNotFound) {
    return Status::NotFound("disk '" + parent.str() + "' has no checkpoint '" +
                            request.from_checkpoint + "'");
  }
  return made;
}

Result<std::vector<BranchView>> ControlService::ListBranches(std::string_view disk_id) {
  ARCHIL_ASSIGN_OR_RETURN(DiskId disk, ResolveBranch(disk_id, ""));
  return lineage_->Branches(disk);
}

Result<BranchView> ControlService::GetBranch(std::string_view disk_id, std::string_view name) {
  ARCHIL_RETURN_IF_ERROR(ValidateBranchName(name));
  ARCHIL_ASSIGN_OR_RETURN(std::vector<BranchView> branches, ListBranches(disk_id));
  for (BranchView& b : branches) {
    if (b.name == name) return std::move(b);
  }
  return Status::NotFound("no branch '" + std::string(name) + "'");
}

Status ControlService::DeleteBranch(std::string_view disk_id, std::string_view name) {
  ARCHIL_RETURN_IF_ERROR(ValidateBranchName(name));
  ARCHIL_ASSIGN_OR_RETURN(DiskId branch, ResolveBranch(disk_id, name));
  ARCHIL_ASSIGN_OR_RETURN(LineageView l, lineage_->Lineage(branch));
  ARCHIL_RETURN_IF_ERROR(lineage_->DeleteDisk(branch));
  SettleKeptRoot(l.root);
  return Status::Ok();
}

void ControlService::SettleKeptRoot(const DiskId& root) {
  Result<LineageView> l = lineage_->Lineage(root);
  if (l.ok() || l.status().code() != Status::Code::kNotFound) return;
  Result<Disk> live = catalog_->GetDisk(root);
  if (live.ok()) return;  // a live root the store lost is created again at its first mount
  Status s = catalog_->PurgeDisk(root);
  if (!s.ok()) {
    ARCHIL_LOG(kWarn) << "disk " << root << ": its last branch is gone but its row stays until "
                      << "the next start: " << s.ToString();
  }
}

}  // namespace archil
