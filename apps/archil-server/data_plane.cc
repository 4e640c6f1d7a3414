#include "data_plane.h"

#include <algorithm>
#include <set>

#include "base/log.h"
#include "catalog/credentials.h"

namespace archil {

namespace {

// The hash an unknown token id is compared against, so that timing does not tell ids apart.
constexpr char kDummyHash[] = "0000000000000000000000000000000000000000000000000000000000000000";

engine::DiskOptions EngineOptionsOf(const Disk& disk) {
  engine::DiskOptions o;
  o.root_mode = disk.root.mode;
  o.root_uid = disk.root.uid;
  o.root_gid = disk.root.gid;
  o.sync = false;
  return o;
}

}  // namespace

Status EnsureEngineDisk(engine::Engine* engine, const Disk& disk) {
  ARCHIL_ASSIGN_OR_RETURN(engine::DiskNo no, engine::DiskNoFromId(disk.id));
  if (engine->Disk(no).ok()) return Status::Ok();
  Status s = engine->CreateDisk(no, EngineOptionsOf(disk));
  return s.code() == Status::Code::kAlreadyExists ? Status::Ok() : s;
}

Result<server::Grant> CatalogAuthority::Authorize(std::string_view token, std::string_view disk) {
  const Status rejected = Status::Unauthenticated("token rejected");
  Result<ParsedCredential> parsed = ParseCredential(token);
  if (!parsed.ok() || parsed->kind != CredentialKind::kDiskToken) return rejected;
  Result<DiskUser> user = catalog_->GetDiskUser(parsed->id);
  if (!user.ok()) {
    if (user.status().code() != Status::Code::kNotFound) return user.status();
    (void)SecretMatches(parsed->secret, kDummyHash);
    return rejected;
  }
  if (!SecretMatches(parsed->secret, user->secret_hash)) return rejected;
  // A branch of the token's disk, by its id: the root's tokens cover the whole lineage.
  Result<DiskId> id = DiskId::Parse(disk);
  if (id.ok() && *id != user->disk_id) {
    ARCHIL_ASSIGN_OR_RETURN(engine::DiskNo no, engine::DiskNoFromId(*id));
    ARCHIL_ASSIGN_OR_RETURN(engine::DiskNo root, engine::DiskNoFromId(user->disk_id));
    Result<engine::LineageInfo> l = engine_->Lineage(no);
    if (!l.ok() || l->hidden || l->root != root || l->parent.value() == 0) {
      return Status::NotFound("no such disk");
    }
    return server::Grant{no, id->str(), BranchName(no), user->identifier};
  }
  return AuthorizeRoot(*user, disk);
}

std::string CatalogAuthority::BranchName(engine::DiskNo disk) {
  Result<std::vector<engine::BranchInfo>> all = engine_->Branches(disk);
  if (all.ok()) {
    for (const engine::BranchInfo& b : *all) {
      if (b.disk == disk) return b.name;
    }
  }
  return engine::DiskIdFromNo(disk).str();
}

Result<server::Grant> CatalogAuthority::AuthorizeRoot(const DiskUser& user, std::string_view disk) {
  Result<Disk> d = catalog_->GetDisk(user.disk_id);
  if (!d.ok()) {
    return d.status().code() == Status::Code::kNotFound ? Status::NotFound("no such disk")
                                                        : d.status();
  }
  if (!disk.empty() && disk != d->id.str() && disk != d->name)
    return Status::NotFound("no such disk");
  ARCHIL_ASSIGN_OR_RETURN(engine::DiskNo no, engine::DiskNoFromId(d->id));
  // A disk whose engine tree a crash lost (ADR 0010) is made on its first mount.
  ARCHIL_RETURN_IF_ERROR(EnsureEngineDisk(engine_, *d));
  return server::Grant{no, d->id.str(), d->name, user.identifier};
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

namespace {

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

Status Reconcile(Catalog* catalog, engine::Engine* engine) {
  std::set<uint64_t> roots;  // live and kept catalog disks
  PageRequest page;
  page.limit = 100;
  while (true) {
    ARCHIL_ASSIGN_OR_RETURN(Page<Disk> disks, catalog->ListDisks(page, ""));
    for (const Disk& d : disks.items) {
      ARCHIL_ASSIGN_OR_RETURN(engine::DiskNo no, engine::DiskNoFromId(d.id));
      roots.insert(no.value());
      if (!engine->Disk(no).ok()) {
        ARCHIL_LOG(kInfo) << "reconcile: disk " << d.id << " has no tree (a crash after its "
                          << "create): creating it";
        ARCHIL_RETURN_IF_ERROR(EnsureEngineDisk(engine, d));
      }
    }
    if (disks.next_cursor.empty()) break;
    page.cursor = disks.next_cursor;
  }
  ARCHIL_ASSIGN_OR_RETURN(std::vector<DiskId> kept, catalog->DisksKeptForBranches());
  for (const DiskId& id : kept) {
    ARCHIL_ASSIGN_OR_RETURN(engine::DiskNo no, engine::DiskNoFromId(id));
    if (engine->Lineage(no).ok()) {
      roots.insert(no.value());
      continue;
    }
    ARCHIL_LOG(kInfo) << "reconcile: disk " << id << " was kept for branches that are gone: "
                      << "removing its row";
    ARCHIL_RETURN_IF_ERROR(catalog->PurgeDisk(id));
  }
  // Branches first (newest lineages last), so that deleting a root never meets a live branch.
  std::vector<engine::DiskNo> orphans;
  for (engine::DiskNo no : engine->ListDisks()) {
    Result<engine::LineageInfo> l = engine->Lineage(no);
    if (!l.ok() || roots.count(l->root.value())) continue;
    orphans.push_back(no);
  }
  std::stable_partition(orphans.begin(), orphans.end(), [&](engine::DiskNo no) {
    Result<engine::LineageInfo> l = engine->Lineage(no);
    return l.ok() && l->parent.value() != 0;
  });
  for (engine::DiskNo no : orphans) {
    ARCHIL_LOG(kInfo) << "reconcile: " << engine::DiskIdFromNo(no)
                      << " has a tree but no live disk in the catalog: deleting it";
    Status s = engine->DeleteDisk(no);
    if (!s.ok() && s.code() != Status::Code::kNotFound) return s;
  }
  return Status::Ok();
}

}  // namespace archil
