// archil share MNT/PATH [--expires-in SECONDS] (docs/cli.md, docs/api.md "Share links"): prints
// a URL anyone can GET the file at, until it expires. archil share-key rotate: ends every link
// made so far (POST /api/share-key/rotate). The file's disk and its path in the disk
// come from the mount it is under (the mount records of this machine, api/mount_record.h); the
// link is made through the control-plane API with the CLI's API key.
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
  return ShareTarget{best->disk_id, path};
}

Status Share(const CliContext& ctx, const std::string& arg, uint64_t expires_in) {
  std::error_code ec;
  // Lexically: the mount is not asked (a stalled one would make the command wait).
  std::string file = std::filesystem::absolute(arg, ec).lexically_normal().string();
  if (ec) return Status::InvalidArgument("cannot make '" + arg + "' absolute: " + ec.message());
  while (file.size() > 1 && file.back() == '/') file.pop_back();
  ARCHIL_ASSIGN_OR_RETURN(ShareTarget t, TargetOf(file));
  ARCHIL_ASSIGN_OR_RETURN(ApiClient api, ctx.Api());
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
      "The link fails once it expires, once the API key that made it is deleted, once the disk "
      "is deleted, or once the server's share key is rotated (docs/api.md).");
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
