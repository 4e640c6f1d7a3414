#include "data_plane.h"

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
  Result<Disk> d = catalog_->GetDisk(user->disk_id);
  if (!d.ok()) {
    return d.status().code() == Status::Code::kNotFound ? Status::NotFound("no such disk")
                                                        : d.status();
  }
  if (!disk.empty() && disk != d->id.str() && disk != d->name)
    return Status::NotFound("no such disk");
  ARCHIL_ASSIGN_OR_RETURN(engine::DiskNo no, engine::DiskNoFromId(d->id));
  // A disk whose engine tree a crash lost (ADR 0010) is made on its first mount.
  ARCHIL_RETURN_IF_ERROR(EnsureEngineDisk(engine_, *d));
  return server::Grant{no, d->id.str(), d->name, user->identifier};
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
  Status s = engine_->DeleteDisk(no);
  return s.code() == Status::Code::kNotFound ? Status::Ok() : s;
}

Status Reconcile(Catalog* catalog, engine::Engine* engine) {
  std::set<uint64_t> live;
  PageRequest page;
  page.limit = 100;
  while (true) {
    ARCHIL_ASSIGN_OR_RETURN(Page<Disk> disks, catalog->ListDisks(page, ""));
    for (const Disk& d : disks.items) {
      ARCHIL_ASSIGN_OR_RETURN(engine::DiskNo no, engine::DiskNoFromId(d.id));
      live.insert(no.value());
      if (!engine->Disk(no).ok()) {
        ARCHIL_LOG(kInfo) << "reconcile: disk " << d.id << " has no tree (a crash after its "
                          << "create): creating it";
        ARCHIL_RETURN_IF_ERROR(EnsureEngineDisk(engine, d));
      }
    }
    if (disks.next_cursor.empty()) break;
    page.cursor = disks.next_cursor;
  }
  for (engine::DiskNo no : engine->ListDisks()) {
    if (live.count(no.value())) continue;
    ARCHIL_LOG(kInfo) << "reconcile: " << engine::DiskIdFromNo(no)
                      << " has a tree but no live disk in the catalog: deleting it";
    Status s = engine->DeleteDisk(no);
    if (!s.ok() && s.code() != Status::Code::kNotFound) return s;
  }
  return Status::Ok();
}

}  // namespace archil
