// ControlService: share links (control/share_token.h, docs/api.md "Share links").
#include <vector>

#include "api/share_wire.h"
#include "base/ip_range.h"
#include "base/strings.h"
#include "catalog/credentials.h"
#include "control/service.h"
#include "control/share_token.h"

namespace archil {
namespace {

// `path` as the token holds it: components joined by '/', empty ones dropped (so "/a//b" is
// "a/b"), "." and ".." refused.
Result<std::string> SharePath(std::string_view path) {
  if (path.find('\0') != std::string_view::npos) {
    return Status::InvalidArgument("key may not hold a NUL byte");
  }
  std::string out;
  for (std::string_view part : Split(path, '/')) {
    if (part.empty()) continue;
    if (part == "." || part == "..") return Status::InvalidArgument("key may not hold '.' or '..'");
    if (!out.empty()) out += '/';
    out += part;
  }
  if (out.empty()) return Status::InvalidArgument("key must name a file in the disk");
  if (out.size() > kMaxSharePathBytes) {
    return Status::InvalidArgument("key is longer than " + std::to_string(kMaxSharePathBytes) +
                                   " bytes");
  }
  return out;
}

}  // namespace

Result<ShareCredential> ControlService::AuthenticateShare(std::string_view authorization,
                                                          std::string_view disk_id,
                                                          std::string_view peer) const {
  ARCHIL_ASSIGN_OR_RETURN(std::string credential, CredentialFromAuthorization(authorization));
  Result<ParsedCredential> parsed = ParseCredential(credential);
  if (!parsed.ok() || parsed->kind != CredentialKind::kDiskToken) {
    ARCHIL_ASSIGN_OR_RETURN(ApiKey key, Authenticate(authorization));
    return ShareCredential{ShareMaker::kApiKey, key.id};
  }
  // As the disk server checks a mount's token (dataplane/catalog_authority.cc): compared even
  // when the id is unknown, so timing does not tell which ids exist.
  static const std::string kNoSuchHash(64, '0');
  Result<DiskUser> user = catalog_->GetDiskUser(parsed->id);
  if (!user.ok() && user.status().code() != Status::Code::kNotFound) return user.status();
  const bool valid = SecretMatches(parsed->secret, user.ok() ? user->secret_hash : kNoSuchHash);
  if (!user.ok() || !valid) return Status::Unauthenticated("invalid or revoked credential");
  // The lineage's tokens are its root's: a branch's links are made with its root's tokens.
  Result<DiskId> root = UsersRoot(disk_id);
  if (!root.ok() && root.status().code() != Status::Code::kNotFound &&
      root.status().code() != Status::Code::kInvalidArgument) {
    return root.status();
  }
  if (!root.ok() || *root != user->disk_id) {
    return Status::PermissionDenied(
        "this disk token is another disk's: it makes share links of its own disk (and its "
        "branches) only; use an API key (key-...) for other disks");
  }
  // From where the token may mount only: the disk's allowed client addresses (the root's).
  ARCHIL_ASSIGN_OR_RETURN(Disk row, catalog_->GetLineageRoot(*root));
  if (!row.allowed_ips.empty() && (peer.empty() || !IpAllowed(row.allowed_ips, peer))) {
    return Status::PermissionDenied(
        "the disk's allowed client addresses do not cover this client (" +
        std::string(peer.empty() ? "unknown" : peer) +
        "): a disk token makes share links only from where it may mount; use an API key");
  }
  return ShareCredential{ShareMaker::kDiskUser, user->identifier};
}

Result<ShareLink> ControlService::CreateShareLink(const ShareCredential& by,
                                                  std::string_view disk_id, std::string_view branch,
                                                  std::string_view path, uint64_t expires_in) {
  if (expires_in == 0 || expires_in > wire::kMaxShareSeconds) {
    return Status::InvalidArgument("expiresIn must be between 1 and " +
                                   std::to_string(wire::kMaxShareSeconds) + " seconds");
  }
  ARCHIL_ASSIGN_OR_RETURN(std::string normal, SharePath(path));
  ARCHIL_ASSIGN_OR_RETURN(DiskId disk, ResolveBranch(disk_id, branch));
  if (files_ == nullptr) {
    return Status::Unavailable(
        "this server has no data plane: share links are served by the server that holds the "
        "disks");
  }
  // The file must be there now; the link fails later if it goes.
  ARCHIL_RETURN_IF_ERROR(files_->OpenFile(disk, normal).status());
  ARCHIL_ASSIGN_OR_RETURN(std::string key, catalog_->ShareKey());
  // Expiry is kept to the second, rounded up: a link lives at least `expires_in` seconds (at most
  // one more), never less because it was made late in a second.
  const int64_t now_s = (clock_->NowMicros() + 999'999) / 1'000'000;
  ShareClaims claims{disk.str(), by.id, normal, now_s + static_cast<int64_t>(expires_in), by.kind};
  return ShareLink{SignShareToken(claims, key), expires_in};
}

Result<std::unique_ptr<FileReader>> ControlService::OpenShareLink(std::string_view token) {
  ARCHIL_ASSIGN_OR_RETURN(std::string key, catalog_->ShareKey());
  // Nothing in the token is read before its MAC holds.
  ARCHIL_ASSIGN_OR_RETURN(ShareClaims claims, VerifyShareToken(token, key));
  if (clock_->NowMicros() / 1'000'000 >= claims.expires_at) {
    return Status::Stale("this share link expired at " +
                         FormatRfc3339(claims.expires_at * 1'000'000));
  }
  if (claims.maker == ShareMaker::kApiKey) {
    Result<ApiKey> maker = catalog_->GetApiKey(claims.maker_id);
    if (!maker.ok()) {
      if (maker.status().code() != Status::Code::kNotFound) return maker.status();
      return Status::Stale("the API key that made this share link was deleted");
    }
  }
  Result<DiskId> disk = ResolveBranch(claims.disk, "");
  if (!disk.ok()) {
    if (disk.status().code() != Status::Code::kNotFound) return disk.status();
    return Status::Stale("the disk of this share link was deleted");
  }
  if (claims.maker == ShareMaker::kDiskUser) {
    // Removing the user (revoking its token) ends the links it made.
    Result<DiskUser> maker = catalog_->GetDiskUser(claims.maker_id);
    if (!maker.ok()) {
      if (maker.status().code() != Status::Code::kNotFound) return maker.status();
      return Status::Stale("the disk token that made this share link was revoked");
    }
  }
  if (files_ == nullptr) {
    return Status::Unavailable(
        "this server has no data plane: share links are served by the server that holds the "
        "disks");
  }
  Result<std::unique_ptr<FileReader>> file = files_->OpenFile(*disk, claims.path);
  if (!file.ok() && file.status().code() == Status::Code::kNotFound) {
    return Status::NotFound("the shared file '" + claims.path +
                            "' is no longer there, or no longer a regular file");
  }
  return file;
}

Status ControlService::RotateShareKey() { return catalog_->RotateShareKey(clock_->NowMicros()); }

}  // namespace archil
