#include "control/service.h"

#include <algorithm>

#include "api/names.h"
#include "base/log.h"
#include "catalog/credentials.h"
#include "control/after_reply.h"

namespace archil {

ControlService::ControlService(Catalog* catalog, const Clock* clock, std::string region,
                               CatalogListener* events, LineageStore* lineage)
    : catalog_(catalog),
      clock_(clock),
      region_(std::move(region)),
      events_(events),
      lineage_(lineage) {}

Result<uint32_t> ValidatePageLimit(std::optional<uint64_t> limit) {
  if (!limit) return 50u;
  if (*limit < 1 || *limit > 100) return Status::InvalidArgument("limit must be between 1 and 100");
  return static_cast<uint32_t>(*limit);
}

Status ControlService::Health(int64_t stalled_after_ms) const {
  const int64_t busy_ms = catalog_->BusyNs() / 1'000'000;
  if (busy_ms <= stalled_after_ms) return Status::Ok();
  return Status::Unavailable("a catalog operation has waited " + std::to_string(busy_ms / 1000) +
                             " s for the server's disk (stalled?)");
}

Result<ApiKey> ControlService::Authenticate(std::string_view authorization) const {
  ARCHIL_ASSIGN_OR_RETURN(std::string credential, CredentialFromAuthorization(authorization));
  Result<ParsedCredential> parsed = ParseCredential(credential);
  if (!parsed.ok()) return Status::Unauthenticated(parsed.status().message());
  // Compare even when the id is unknown, so timing does not tell which ids exist.
  static const std::string kNoSuchHash(64, '0');
  if (parsed->kind == CredentialKind::kDiskToken) {
    Result<DiskUser> user = catalog_->GetDiskUser(parsed->id);
    bool valid = SecretMatches(parsed->secret, user.ok() ? user->secret_hash : kNoSuchHash);
    if (user.ok() && valid) {
      return Status::PermissionDenied(
          "this is a disk token, which can only mount its disk: use an API key (key-...) for the "
          "control plane");
    }
    return Status::Unauthenticated("invalid or revoked credential");
  }
  // A key verified before needs no catalog read (control/key_cache.h); the secret is still
  // compared on every request.
  std::optional<ApiKey> known = keys_.Get(parsed->id);
  const uint64_t epoch = known ? 0 : keys_.Begin();  // before the catalog is read
  Result<ApiKey> key = known ? Result<ApiKey>(std::move(*known)) : catalog_->GetApiKey(parsed->id);
  if (!key.ok() && key.status().code() != Status::Code::kNotFound) return key.status();
  bool valid = SecretMatches(parsed->secret, key.ok() ? key->secret_hash : kNoSuchHash);
  if (!key.ok() || !valid) return Status::Unauthenticated("invalid or revoked API key");
  if (!known) keys_.Put(*key, epoch);
  return key;
}

Result<CreatedDisk> ControlService::CreateDisk(const CreateDiskRequest& request) {
  ARCHIL_RETURN_IF_ERROR(ValidateDiskName(request.name));
  if (request.root.mode > 07777) {
    return Status::InvalidArgument("rootAttrs.mode must be permission bits (at most 07777)");
  }
  Disk disk;
  ARCHIL_ASSIGN_OR_RETURN(disk.id, DiskId::Generate());
  disk.name = request.name;
  disk.region = region_;
  disk.root = request.root;
  disk.created_at = clock_->NowMicros();

  ARCHIL_ASSIGN_OR_RETURN(IssuedCredential cred, IssueCredential(CredentialKind::kDiskToken));
  DiskUser user{cred.id,     disk.id,          "token",        "default",
                cred.suffix, cred.secret_hash, disk.created_at};
  ARCHIL_ASSIGN_OR_RETURN(CreateDiskResult result, catalog_->CreateDisk(disk, user));
  CreatedDisk out{std::move(result.disk), result.created, ""};
  if (out.created) out.token = cred.token;
  // The engine's copy follows the reply (the catalog's commit is the acknowledgement; ADR 0010).
  if (events_) Defer([this, disk = out.disk] { MakeEngineCopy(disk); });
  return out;
}

void ControlService::MakeEngineCopy(const Disk& disk) {
  events_->OnDiskCreated(disk);
  // After the reply, a delete of the disk may have come first, and its purge may have found no
  // tree to delete: then this one goes the same way.
  Result<Disk> now = catalog_->GetDisk(disk.id);
  if (now.ok()) return;
  if (now.status().code() != Status::Code::kNotFound) {
    ARCHIL_LOG(kWarn) << "disk " << disk.id << ": could not check it after creating its tree ("
                      << now.status().ToString() << "); a restart removes the tree if it is gone";
    return;
  }
  if (lineage_ == nullptr) return;
  Status s = lineage_->DeleteDisk(disk.id);
  if (!s.ok() && s.code() != Status::Code::kNotFound) {
    ARCHIL_LOG(kWarn) << "disk " << disk.id << ": deleted before its tree was made, and deleting "
                      << "the tree failed (" << s.ToString() << "); a restart removes it";
  }
}

Result<Disk> ControlService::GetDisk(std::string_view id) const {
  ARCHIL_ASSIGN_OR_RETURN(DiskId disk, DiskId::Parse(id));
  Result<Disk> root = catalog_->GetDisk(disk);
  if (root.ok() || root.status().code() != Status::Code::kNotFound || !lineage_) return root;
  // A branch: a disk of its own, with the root's settings and users.
  Result<LineageView> l = lineage_->Lineage(disk);
  if (!l.ok() || !l->parent || l->hidden) return root.status();
  ARCHIL_ASSIGN_OR_RETURN(Disk d, catalog_->GetLineageRoot(l->root));
  ARCHIL_ASSIGN_OR_RETURN(std::vector<BranchView> branches, lineage_->Branches(disk));
  for (const BranchView& b : branches) {
    if (b.disk != disk) continue;
    d.id = disk;
    d.state = DiskState::kAvailable;
    d.created_at = b.created_at;
    d.branch = DiskBranch{l->root, b.parent, b.name, b.from_checkpoint};
    return d;
  }
  return root.status();
}

Result<Page<Disk>> ControlService::ListDisks(const PageRequest& page, std::string_view name) const {
  if (!name.empty()) ARCHIL_RETURN_IF_ERROR(ValidateDiskName(name));
  return catalog_->ListDisks(page, name);
}

Result<size_t> ControlService::DeleteDisk(std::string_view id) {
  ARCHIL_ASSIGN_OR_RETURN(DiskId disk, DiskId::Parse(id));
  size_t branch_count = 0;
  if (lineage_) {
    Result<LineageView> l = lineage_->Lineage(disk);
    if (l.ok() && l->parent) {
      if (l->hidden) return Status::NotFound("no disk with id '" + disk.str() + "'");
      ARCHIL_RETURN_IF_ERROR(lineage_->DeleteDisk(disk));
      SettleKeptRoot(l->root);
      // Its own branches, if any, keep it hidden.
      Result<LineageView> after = lineage_->Lineage(disk);
      if (!after.ok()) return size_t{0};
      ARCHIL_ASSIGN_OR_RETURN(std::vector<BranchView> all, lineage_->Branches(after->root));
      size_t children = 0;
      for (const BranchView& b : all) children += b.parent == disk ? 1 : 0;
      return children;
    }
    if (l.ok()) {
      ARCHIL_ASSIGN_OR_RETURN(std::vector<BranchView> branches, lineage_->Branches(disk));
      branch_count = branches.size();
    }
  }
  const bool has_branches = branch_count > 0;
  ARCHIL_RETURN_IF_ERROR(catalog_->MarkDiskDeleting(disk, has_branches));
  if (events_) events_->OnDiskDeleted(disk);
  if (has_branches) {
    // Hidden now rather than by the purger, which leaves kept roots alone.
    Status s = lineage_->DeleteDisk(disk);
    if (!s.ok() && s.code() != Status::Code::kNotFound) return s;
    SettleKeptRoot(disk);
  }
  return branch_count;
}

Result<DiskId> ControlService::UsersRoot(std::string_view disk_id) const {
  ARCHIL_ASSIGN_OR_RETURN(DiskId disk, DiskId::Parse(disk_id));
  // A root, live or kept hidden for its branches (whose tokens still open them).
  Result<Disk> row = catalog_->GetLineageRoot(disk);
  if (row.ok()) return disk;
  if (row.status().code() != Status::Code::kNotFound || lineage_ == nullptr) return row.status();
  // A live branch: it has no users of its own.
  Result<LineageView> l = lineage_->Lineage(disk);
  if (!l.ok() && l.status().code() != Status::Code::kNotFound) return l.status();
  if (!l.ok() || !l->parent || l->hidden) return row.status();
  return l->root;
}

Result<std::vector<DiskUser>> ControlService::ListDiskUsers(std::string_view disk_id) const {
  ARCHIL_ASSIGN_OR_RETURN(DiskId root, UsersRoot(disk_id));
  ARCHIL_ASSIGN_OR_RETURN(Disk d, catalog_->GetLineageRoot(root));
  return std::move(d.users);
}

Result<CreatedUser> ControlService::AddDiskUser(std::string_view disk_id,
                                                std::string_view nickname) {
  if (nickname.empty()) return Status::InvalidArgument("nickname must not be empty");
  ARCHIL_RETURN_IF_ERROR(ValidateText("nickname", nickname, 255));
  ARCHIL_ASSIGN_OR_RETURN(DiskId disk, UsersRoot(disk_id));
  ARCHIL_ASSIGN_OR_RETURN(IssuedCredential cred, IssueCredential(CredentialKind::kDiskToken));
  DiskUser user{cred.id,
                disk,
                "token",
                std::string(nickname),
                cred.suffix,
                cred.secret_hash,
                clock_->NowMicros()};
  ARCHIL_RETURN_IF_ERROR(catalog_->AddDiskUser(user));
  return CreatedUser{std::move(user), cred.token};
}

Status ControlService::RemoveDiskUser(std::string_view disk_id, std::string_view identifier) {
  ARCHIL_RETURN_IF_ERROR(ValidateText("identifier", identifier, 64));
  ARCHIL_ASSIGN_OR_RETURN(DiskId disk, UsersRoot(disk_id));
  ARCHIL_RETURN_IF_ERROR(catalog_->RemoveDiskUser(disk, identifier));
  if (events_) events_->OnTokenRevoked(disk, identifier);
  return Status::Ok();
}

Result<std::vector<IpRange>> ControlService::GetAllowedIps(std::string_view disk_id) const {
  ARCHIL_ASSIGN_OR_RETURN(DiskId root, UsersRoot(disk_id));
  ARCHIL_ASSIGN_OR_RETURN(Disk d, catalog_->GetLineageRoot(root));
  return std::move(d.allowed_ips);
}

Result<std::vector<IpRange>> ControlService::SetAllowedIps(
    std::string_view disk_id, const std::vector<std::string>& entries) {
  if (entries.size() > kMaxAllowedIps) {
    return Status::InvalidArgument("allowedIps has " + std::to_string(entries.size()) +
                                   " entries; at most " + std::to_string(kMaxAllowedIps) +
                                   " are allowed (use CIDR ranges)");
  }
  std::vector<IpRange> allowed;
  for (const std::string& e : entries) {
    ARCHIL_ASSIGN_OR_RETURN(IpRange r, ParseIpRange(e));
    if (std::find(allowed.begin(), allowed.end(), r) == allowed.end()) allowed.push_back(r);
  }
  ARCHIL_ASSIGN_OR_RETURN(DiskId root, UsersRoot(disk_id));
  ARCHIL_RETURN_IF_ERROR(catalog_->SetAllowedIps(root, allowed));
  if (events_) events_->OnAllowedIpsChanged(root, allowed);
  return allowed;
}

Result<CreatedApiKey> ControlService::CreateApiKey(std::string_view name,
                                                   std::string_view description) {
  ARCHIL_RETURN_IF_ERROR(ValidateKeyName(name));
  ARCHIL_RETURN_IF_ERROR(ValidateText("description", description, 500));
  ARCHIL_ASSIGN_OR_RETURN(IssuedCredential cred, IssueCredential(CredentialKind::kApiKey));
  ApiKey key{cred.id,     std::string(name), std::string(description),
             cred.suffix, cred.secret_hash,  clock_->NowMicros()};
  ARCHIL_RETURN_IF_ERROR(catalog_->AddApiKey(key));
  return CreatedApiKey{std::move(key), cred.token};
}

Result<Page<ApiKey>> ControlService::ListApiKeys(const PageRequest& page) const {
  return catalog_->ListApiKeys(page);
}

Status ControlService::DeleteApiKey(std::string_view id) {
  ARCHIL_RETURN_IF_ERROR(ValidateText("id", id, 64));
  Status s = catalog_->DeleteApiKey(id);
  // Also after a failure: the row may be gone even if the commit's answer was lost.
  keys_.Forget(id);
  return s;
}

Result<bool> ControlService::BootstrapAdminKey(
    const std::function<Status(const std::string& token)>& persist, bool recovered) {
  ARCHIL_ASSIGN_OR_RETURN(int64_t keys, catalog_->CountApiKeys());
  if (keys > 0 && !recovered) return false;
  ARCHIL_ASSIGN_OR_RETURN(IssuedCredential cred, IssueCredential(CredentialKind::kApiKey));
  ARCHIL_RETURN_IF_ERROR(persist(cred.token));
  ApiKey key{cred.id,
             "admin",
             recovered ? "created by archil server when it recovered its disks from the bucket"
                       : "created by archil server on first start",
             cred.suffix,
             cred.secret_hash,
             clock_->NowMicros()};
  ARCHIL_RETURN_IF_ERROR(catalog_->AddApiKey(key));
  return true;
}

}  // namespace archil
