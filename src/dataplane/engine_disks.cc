#include "dataplane/engine_disks.h"

#include <set>

#include "base/log.h"

namespace archil {
namespace {

engine::DiskOptions EngineOptionsOf(const Disk& disk) {
  engine::DiskOptions o;
  o.root_mode = disk.root.mode;
  o.root_uid = disk.root.uid;
  o.root_gid = disk.root.gid;
  o.sync = false;
  return o;
}

int64_t Micros(int64_t ns) { return ns / 1000; }

BranchView ViewOf(const engine::BranchInfo& b) {
  return BranchView{engine::DiskIdFromNo(b.disk),
                    engine::DiskIdFromNo(b.parent),
                    b.name,
                    b.from_checkpoint,
                    Micros(b.created_ns),
                    b.hidden};
}

}  // namespace

Status EnsureEngineDisk(engine::Engine* engine, const Disk& disk) {
  ARCHIL_ASSIGN_OR_RETURN(engine::DiskNo no, engine::DiskNoFromId(disk.id));
  if (engine->Disk(no).ok()) return Status::Ok();
  Status s = engine->CreateDisk(no, EngineOptionsOf(disk));
  return s.code() == Status::Code::kAlreadyExists ? Status::Ok() : s;
}

void EngineDisks::OnDiskCreated(const Disk& disk) {
  Status s = EnsureEngineDisk(engine_, disk);
  if (!s.ok()) {
    ARCHIL_LOG(kError) << "disk " << disk.id << ": creating its tree failed (retried at its first "
                       << "mount and at start): " << s.ToString();
  }
}

void EngineDisks::OnDiskDeleted(const DiskId& disk) {
  Result<engine::DiskNo> no = engine::DiskNoFromId(disk);
  server::DiskServer* server = server_.load();
  if (!no.ok() || server == nullptr) return;
  const size_t n = server->EndDiskSessions(*no);
  if (n > 0) ARCHIL_LOG(kInfo) << "disk " << disk << " deleted: " << n << " sessions ended";
}

void EngineDisks::OnTokenRevoked(const DiskId& disk, std::string_view token_id) {
  server::DiskServer* server = server_.load();
  if (server == nullptr) return;
  const size_t n = server->EndTokenSessions(token_id);
  if (n > 0) {
    ARCHIL_LOG(kInfo) << "token " << token_id << " of " << disk << " revoked: " << n
                      << " sessions ended";
  }
}

void EngineDisks::OnAllowedIpsChanged(const DiskId& disk, const std::vector<IpRange>& allowed) {
  server::DiskServer* server = server_.load();
  Result<engine::DiskNo> root = engine::DiskNoFromId(disk);
  if (server == nullptr || !root.ok()) return;
  // The list is the lineage root's: it covers every branch (and their checkpoints' mounts).
  std::set<uint64_t> lineage = {root->value()};
  Result<std::vector<engine::BranchInfo>> branches = engine_->Branches(*root);
  if (branches.ok()) {
    for (const engine::BranchInfo& b : *branches) lineage.insert(b.disk.value());
  } else if (branches.status().code() != Status::Code::kNotFound) {
    ARCHIL_LOG(kError) << "disk " << disk << ": listing its branches to apply its allowed "
                       << "addresses: " << branches.status().ToString();
  }
  const size_t n = server->EndDisallowedSessions(lineage, allowed, disk.str());
  if (n > 0) {
    ARCHIL_LOG(kInfo) << "disk " << disk << ": allowed addresses changed: " << n
                      << " sessions from addresses no longer allowed ended";
  }
}

Status EngineDisks::PurgeDiskData(const DiskId& disk) {
  ARCHIL_ASSIGN_OR_RETURN(engine::DiskNo no, engine::DiskNoFromId(disk));
  if (server::DiskServer* server = server_.load()) server->EndDiskSessions(no);
  // NotFound: already deleted, or hidden earlier for its branches.
  Status s = engine_->DeleteDisk(no);
  if (!s.ok() && s.code() != Status::Code::kNotFound) return s;
  Result<engine::LineageInfo> l = engine_->Lineage(no);
  if (l.ok() && l->hidden) return Status::FailedPrecondition("kept for its branches");
  return Status::Ok();
}

Result<LineageView> EngineDisks::Lineage(const DiskId& disk) {
  ARCHIL_ASSIGN_OR_RETURN(engine::DiskNo no, engine::DiskNoFromId(disk));
  ARCHIL_ASSIGN_OR_RETURN(engine::LineageInfo l, engine_->Lineage(no));
  LineageView v;
  v.root = engine::DiskIdFromNo(l.root);
  if (l.parent.value() != 0) v.parent = engine::DiskIdFromNo(l.parent);
  v.hidden = l.hidden;
  return v;
}

Result<std::vector<CheckpointView>> EngineDisks::Checkpoints(const DiskId& disk) {
  ARCHIL_ASSIGN_OR_RETURN(engine::DiskNo no, engine::DiskNoFromId(disk));
  ARCHIL_ASSIGN_OR_RETURN(std::vector<engine::CheckpointInfo> all, engine_->Checkpoints(no));
  std::vector<CheckpointView> out;
  out.reserve(all.size());
  for (const engine::CheckpointInfo& c : all) out.push_back({c.name, true, Micros(c.created_ns)});
  return out;
}

Status EngineDisks::DeleteCheckpoint(const DiskId& disk, std::string_view name) {
  ARCHIL_ASSIGN_OR_RETURN(engine::DiskNo no, engine::DiskNoFromId(disk));
  // Mounts of the checkpoint end first: a view must not outlive its checkpoint.
  if (server::DiskServer* server = server_.load()) return server->DeleteCheckpoint(no, name);
  return engine_->DeleteCheckpoint(no, name);
}

Result<BranchResult> EngineDisks::CreateBranch(const NewBranch& request) {
  engine::BranchRequest r;
  ARCHIL_ASSIGN_OR_RETURN(r.parent, engine::DiskNoFromId(request.parent));
  ARCHIL_ASSIGN_OR_RETURN(r.child, engine::DiskNoFromId(request.child));
  r.checkpoint = request.checkpoint;
  r.name = request.name;
  r.idempotency_key = request.idempotency_key;
  ARCHIL_ASSIGN_OR_RETURN(engine::BranchCreated made, engine_->CreateBranch(r));
  return BranchResult{ViewOf(made.branch), made.created};
}

Result<std::vector<BranchView>> EngineDisks::Branches(const DiskId& disk) {
  ARCHIL_ASSIGN_OR_RETURN(engine::DiskNo no, engine::DiskNoFromId(disk));
  ARCHIL_ASSIGN_OR_RETURN(std::vector<engine::BranchInfo> all, engine_->Branches(no));
  std::vector<BranchView> out;
  out.reserve(all.size());
  for (const engine::BranchInfo& b : all) out.push_back(ViewOf(b));
  return out;
}

Status EngineDisks::DeleteDisk(const DiskId& disk) {
  ARCHIL_ASSIGN_OR_RETURN(engine::DiskNo no, engine::DiskNoFromId(disk));
  if (server::DiskServer* server = server_.load()) {
    const size_t n = server->EndDiskSessions(no);
    if (n > 0) ARCHIL_LOG(kInfo) << "disk " << disk << " deleted: " << n << " sessions ended";
  }
  return engine_->DeleteDisk(no);
}

}  // namespace archil
