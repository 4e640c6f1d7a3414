// archil share MNT/PATH [--expires-in SECONDS] (docs/cli.md, docs/api.md "Share links"): prints
// a URL anyone can GET the file at, until it expires. archil share-key rotate: ends every link
// made so far (POST /api/share-key/rotate). The file's disk and its path in the disk
// come from the mount it is under (the mount records of this machine, api/mount_record.h); the
// link is made through the control-plane API with an API key if one is given (--api-key,
// ARCHIL_API_KEY), else with the mount's own disk token if this user may read its token file
// (the record names it), else with a local server's admin key. A link made with the disk token
// ends when that disk user is removed (docs/api.md "Share links").
#include <filesystem>

#include "api/endpoints.h"
#include "api/mount_record.h"
#include "api/share_wire.h"
#include "cli/commands.h"
#include "cli/output.h"

namespace archil {
namespace {

struct ShareTarget {
  std::string disk_id;
  std::string path;  // in the disk, from its root
  MountRecord mount;
};

// The live archil mount `file` (absolute, normalized) is under, the deepest if mounts nest, and
// the file's path in its disk (a DISK:/SUBDIR mount's SUBDIR first).
Result<ShareTarget> TargetOf(const std::string& file) {
  const std::string run_dir = ResolveOptionsFromEnv().run_dir;
  const MountRecord* best = nullptr;
  std::vector<MountRecord> records = ListMountRecords(run_dir);
  for (const MountRecord& r : records) {
    const std::string& m = r.mountpoint;
    const bool under = file.size() > m.size() && file.compare(0, m.size(), m) == 0 &&
                       (m == "/" || file[m.size()] == '/');
    if (!under || !ProcessAlive(r.pid)) continue;
    if (best == nullptr || m.size() > best->mountpoint.size()) best = &r;
  }
  if (best == nullptr) {
    return Status::NotFound(file +
                            " is not a file under an archil mount on this machine (see "
                            "`archil status`)");
  }
  if (!best->checkpoint.empty()) {
    return Status::InvalidArgument(best->mountpoint + " shows checkpoint '" + best->checkpoint +
                                   "': a share link serves the disk's head; share from a mount "
                                   "of the head");
  }
  std::string path = file.substr(best->mountpoint == "/" ? 1 : best->mountpoint.size() + 1);
  if (size_t sub = best->disk.find(":/"); sub != std::string::npos) {
    std::string prefix = best->disk.substr(sub + 2);
    while (!prefix.empty() && prefix.back() == '/') prefix.pop_back();
    if (!prefix.empty()) path = prefix + "/" + path;
  }
  return ShareTarget{best->disk_id, path, *best};
}

// The disk token `mount` was made with, read from the token file its record names. The record
// must be root's or this user's and not writable by others (else anyone could name a file for
// this command to send), the token file likewise, and this user must be able to read it: a
// root-owned 0600 token file is not another user's to use. PermissionDenied says which failed.
Result<std::string> MountToken(const MountRecord& mount) {
  const Status none = Status::PermissionDenied(
      "the mount at " + mount.mountpoint +
      " took its disk token from ARCHIL_MOUNT_TOKEN (or an older archil made it), and only its "
      "daemon holds it");
  if (mount.token_file.empty()) return none;
  const std::string run_dir = ResolveOptionsFromEnv().run_dir;
  Result<std::string> text =
      ReadTrustedFile(MountRecordPath(run_dir, mount.mountpoint), /*private_only=*/false);
  if (!text.ok()) return Status::PermissionDenied("its mount record: " + text.status().message());
  Result<MountRecord> record = ParseMountRecord(*text);
  if (!record.ok() || record->token_file.empty()) return none;
  const std::string& file = record->token_file;
  Result<std::string> token = ReadTrustedFile(file, /*private_only=*/false);
  if (!token.ok()) {
    return Status::PermissionDenied("you may not use the mount's disk token file " + file + " (" +
                                    token.status().message() + ")");
  }
  std::string line = token->substr(0, token->find('\n'));
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
  if (!line.starts_with("adt_")) {
    return Status::PermissionDenied("the mount's token file " + file + " holds no disk token");
  }
  return line;
}

// The credential the link is made with (see the top of this file).
Result<ApiClient> ShareApi(const CliContext& ctx, const ShareTarget& t) {
  if (ctx.HasApiKey()) return ctx.Api();
  Result<std::string> token = MountToken(t.mount);
  if (token.ok()) return ctx.ApiWith(std::move(*token));
  Result<ApiClient> admin = ctx.Api();  // a local server's admin key, if this user may read it
  if (admin.ok() || admin.status().code() != Status::Code::kUnauthenticated) return admin;
  return Status::Unauthenticated(
      "archil share needs an API key here: the mount's own disk token cannot be used (" +
      token.status().message() + "), and " + admin.status().message());
}

Status Share(const CliContext& ctx, const std::string& arg, uint64_t expires_in) {
  std::error_code ec;
  // Lexically: the mount is not asked (a stalled one would make the command wait).
  std::string file = std::filesystem::absolute(arg, ec).lexically_normal().string();
  if (ec) return Status::InvalidArgument("cannot make '" + arg + "' absolute: " + ec.message());
  while (file.size() > 1 && file.back() == '/') file.pop_back();
  ARCHIL_ASSIGN_OR_RETURN(ShareTarget t, TargetOf(file));
  ARCHIL_ASSIGN_OR_RETURN(ApiClient api, ShareApi(ctx, t));
  ARCHIL_ASSIGN_OR_RETURN(ApiReply r,
                          api.Call("POST", "/api/disks/" + t.disk_id + "/share",
                                   wire::ToJson(wire::ShareRequest{t.path, expires_in})));
  ARCHIL_ASSIGN_OR_RETURN(wire::ShareReply reply, wire::DecodeShareReply(r.data));
  if (ctx.options.json) {
    PrintJson(r.data);
  } else {
    std::printf("%s\n", reply.url.c_str());
  }
  return Status::Ok();
}

Status RotateShareKey(const CliContext& ctx) {
  ARCHIL_ASSIGN_OR_RETURN(ApiClient api, ctx.Api());
  ARCHIL_ASSIGN_OR_RETURN(ApiReply r, api.Call("POST", "/api/share-key/rotate"));
  Report(ctx.options.json, ctx.options.quiet, r.data,
         "share key rotated: every share link made before now fails");
  return Status::Ok();
}

}  // namespace

void AddShareCommand(CLI::App& app, CliContext* ctx) {
  CLI::App* share = app.add_subcommand(
      "share", "Print a URL anyone can download a file of a mounted disk from, until it expires");
  share->footer(
      "Examples:\n"
      "  archil share /mnt/data/report.pdf\n"
      "  archil share /mnt/data/big.tar --expires-in 3600\n"
      "Credentials: an API key (--api-key, ARCHIL_API_KEY), else the mount's own disk token if "
      "you may read its token file (--token-file, /etc/archil/DISK.token; not one passed in "
      "ARCHIL_MOUNT_TOKEN), else a local server's admin key.\n"
      "The link fails once it expires, once the credential that made it is gone (the API key "
      "deleted, the disk token's user removed), once the disk is deleted, or once the server's "
      "share key is rotated (docs/api.md).");
  auto path = std::make_shared<std::string>();
  auto expires = std::make_shared<uint64_t>(wire::kDefaultShareSeconds);
  share->add_option("PATH", *path, "A file under an archil mount (MNT/PATH)")->required();
  share
      ->add_option("--expires-in", *expires,
                   "Seconds the link works for (1 to 604800 = 7 days; default 86400 = 1 day)")
      ->check(CLI::Range(uint64_t{1}, wire::kMaxShareSeconds));
  share->callback([ctx, path, expires] {
    ctx->action = [ctx, path, expires] { return Share(*ctx, *path, *expires); };
  });

  CLI::App* key = app.add_subcommand("share-key", "Manage the key share links are signed with");
  key->require_subcommand(1);
  key->footer("Examples:\n  archil share-key rotate");
  CLI::App* rotate = key->add_subcommand(
      "rotate", "Replace the share key: every share link made so far stops working");
  rotate->callback([ctx] { ctx->action = [ctx] { return RotateShareKey(*ctx); }; });
}

}  // namespace archil
