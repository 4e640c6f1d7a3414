#include "dataplane/catalog_authority.h"

#include "catalog/credentials.h"
#include "dataplane/engine_disks.h"

namespace archil {
namespace {

// The hash an unknown token id is compared against, so that timing does not tell ids apart.
constexpr char kDummyHash[] = "0000000000000000000000000000000000000000000000000000000000000000";

}  // namespace

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
    // The branch's addresses are its root's (live, or kept for its branches).
    Result<Disk> root_row = catalog_->GetLineageRoot(user->disk_id);
    if (!root_row.ok()) {
      return root_row.status().code() == Status::Code::kNotFound ? Status::NotFound("no such disk")
                                                                 : root_row.status();
    }
    return server::Grant{no, id->str(), BranchName(no), user->identifier,
                         std::move(root_row->allowed_ips)};
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
  return server::Grant{no, d->id.str(), d->name, user.identifier, std::move(d->allowed_ips)};
}

}  // namespace archil
