// archil checkpoints create|list|delete, archil branches create|list|get|delete
// (docs/cli.md, docs/api.md). `checkpoints create` goes through the mount's daemon (its control
// socket, api/mount_control.h); the rest through the control-plane API.
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "api/endpoints.h"
#include "api/mount_control.h"
#include "api/mount_record.h"
#include "api/names.h"
#include "base/clock.h"
#include "base/ids.h"
#include "base/random.h"
#include "base/strings.h"
#include "cli/commands.h"
#include "cli/mount_exchange.h"
#include "cli/output.h"

namespace archil {
namespace {

using nlohmann::json;

std::string BranchQuery(const std::string& branch) {
  return branch.empty() ? std::string() : "?branch=" + UrlEncode(branch);
}

// ---- checkpoints create: through the mount's daemon ----

Status CreateCheckpoint(const CliContext& ctx, const std::string& mnt_arg,
                        const std::string& name) {
  ARCHIL_RETURN_IF_ERROR(ValidateCheckpointName(name));
  const std::string mnt = NormalizeMountpoint(mnt_arg);
  const std::string run_dir = ResolveOptionsFromEnv().run_dir;
  Result<MountRecord> rec = ReadMountRecord(run_dir, mnt);
  if (!rec.ok() || !ProcessAlive(rec->pid)) {
    return Status::NotFound(mnt + " is not an archil mount on this machine (see `archil status`)");
  }
  if (!rec->checkpoint.empty())
    return CheckpointFromAViewRefused(mnt, rec->disk_id, rec->checkpoint);
  // Every write(2) that returned is in the kernel's page cache; syncfs sends it to the daemon,
  // which answers each write only once the server has it durably, so the checkpoint holds them.
  int fd = open(mnt.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Status::FromErrno(errno, "open " + mnt);
  int rc = syncfs(fd);
  int err = errno;
  close(fd);
  if (rc != 0) return Status::FromErrno(err, "flush " + mnt + " before the checkpoint");
  ARCHIL_ASSIGN_OR_RETURN(std::string line,
                          ExchangeWithMount(MountControlPath(run_dir, mnt),
                                            EncodeControlRequest({"checkpoint_create", name, ""})));
  ARCHIL_ASSIGN_OR_RETURN(ControlReply reply, DecodeControlReply(line));
  ARCHIL_RETURN_IF_ERROR(reply.status);
  json data = {{"checkpoint_name", reply.checkpoint_name},
               {"status", reply.checkpoint_status},
               {"created_at", FormatRfc3339(reply.created_at_ns / 1000)},
               {"disk_id", rec->disk_id}};
  Report(ctx.options.json, ctx.options.quiet, data,
         "checkpoint " + name + " of " + rec->disk_id + " committed");
  return Status::Ok();
}

// ---- through the API ----

Status ListCheckpoints(const CliContext& ctx, const std::string& ref, const std::string& branch) {
  ARCHIL_ASSIGN_OR_RETURN(ApiClient api, ctx.Api());
  ARCHIL_ASSIGN_OR_RETURN(std::string id, DiskIdOf(api, ref));
  ARCHIL_ASSIGN_OR_RETURN(
      ApiReply r, api.Call("GET", "/api/disks/" + id + "/checkpoints" + BranchQuery(branch)));
  ARCHIL_ASSIGN_OR_RETURN(std::vector<wire::Checkpoint> cps, wire::DecodeCheckpointList(r.data));
  if (ctx.options.json) {
    PrintJson(r.data);
    return Status::Ok();
  }
  std::vector<std::vector<std::string>> rows;
  for (const wire::Checkpoint& c : cps) rows.push_back({c.name, c.status, c.created_at});
  PrintTable(ctx.options.quiet, {"NAME", "STATUS", "CREATED"}, rows);
  return Status::Ok();
}

Status DeleteCheckpoint(const CliContext& ctx, const std::string& ref, const std::string& name,
                        const std::string& branch) {
  ARCHIL_RETURN_IF_ERROR(ValidateCheckpointName(name));
  ARCHIL_ASSIGN_OR_RETURN(ApiClient api, ctx.Api());
  ARCHIL_ASSIGN_OR_RETURN(std::string id, DiskIdOf(api, ref));
  ARCHIL_ASSIGN_OR_RETURN(
      ApiReply r, api.Call("DELETE", "/api/disks/" + id + "/checkpoints/" + UrlEncode(name) +
                                         BranchQuery(branch)));
  Report(ctx.options.json, ctx.options.quiet, r.data, "deleted checkpoint " + name);
  return Status::Ok();
}

struct BranchArgs {
  std::string disk, name, from_checkpoint, from_branch;
};

Status CreateBranch(const CliContext& ctx, const BranchArgs& a) {
  ARCHIL_RETURN_IF_ERROR(ValidateBranchName(a.name));
  ARCHIL_RETURN_IF_ERROR(ValidateCheckpointName(a.from_checkpoint));
  ARCHIL_ASSIGN_OR_RETURN(ApiClient api, ctx.Api());
  ARCHIL_ASSIGN_OR_RETURN(std::string id, DiskIdOf(api, a.disk));
  wire::CreateBranchRequest body{a.name, a.from_checkpoint, std::nullopt};
  if (!a.from_branch.empty()) body.from_branch = a.from_branch;
  // One key per command: a retry after a lost answer gets the branch the first attempt made.
  ARCHIL_ASSIGN_OR_RETURN(std::string key, SecureRandomHex(16));
  Result<ApiReply> r = Status::Internal("not sent");
  for (int attempt = 0; attempt < 3; ++attempt) {
    r = api.Call("POST", "/api/disks/" + id + "/branches", wire::ToJson(body),
                 {{"Idempotency-Key", key}});
    if (r.ok() || r.status().code() != Status::Code::kUnavailable) break;
  }
  if (!r.ok()) return r.status();
  ARCHIL_ASSIGN_OR_RETURN(wire::Branch b, wire::DecodeBranch(r->data));
  if (ctx.options.json) {
    PrintJson(r->data);
  } else if (ctx.options.quiet) {
    std::printf("%s\n", b.filesystem_id.c_str());
  } else {
    std::printf("created branch %s of %s from checkpoint %s: disk %s\n", b.name.c_str(), id.c_str(),
                b.from_checkpoint.c_str(), b.filesystem_id.c_str());
  }
  return Status::Ok();
}

std::vector<std::string> BranchRow(const wire::Branch& b) {
  return {b.name, b.filesystem_id, b.parent_id, b.from_checkpoint, b.status, b.created_at};
}
const std::vector<std::string> kBranchHeader = {"NAME",       "DISK",   "PARENT",
                                                "CHECKPOINT", "STATUS", "CREATED"};

Status ListBranches(const CliContext& ctx, const std::string& ref) {
  ARCHIL_ASSIGN_OR_RETURN(ApiClient api, ctx.Api());
  ARCHIL_ASSIGN_OR_RETURN(std::string id, DiskIdOf(api, ref));
  ARCHIL_ASSIGN_OR_RETURN(ApiReply r, api.Call("GET", "/api/disks/" + id + "/branches"));
  ARCHIL_ASSIGN_OR_RETURN(std::vector<wire::Branch> branches, wire::DecodeBranchList(r.data));
  if (ctx.options.json) {
    PrintJson(r.data);
    return Status::Ok();
  }
  std::vector<std::vector<std::string>> rows;
  for (const wire::Branch& b : branches) rows.push_back(BranchRow(b));
  PrintTable(ctx.options.quiet, kBranchHeader, rows);
  return Status::Ok();
}

Status GetBranch(const CliContext& ctx, const std::string& ref, const std::string& name) {
  ARCHIL_RETURN_IF_ERROR(ValidateBranchName(name));
  ARCHIL_ASSIGN_OR_RETURN(ApiClient api, ctx.Api());
  ARCHIL_ASSIGN_OR_RETURN(std::string id, DiskIdOf(api, ref));
  ARCHIL_ASSIGN_OR_RETURN(ApiReply r,
                          api.Call("GET", "/api/disks/" + id + "/branches/" + UrlEncode(name)));
  ARCHIL_ASSIGN_OR_RETURN(wire::Branch b, wire::DecodeBranch(r.data));
  if (ctx.options.json) {
    PrintJson(r.data);
    return Status::Ok();
  }
  PrintTable(ctx.options.quiet, kBranchHeader, {BranchRow(b)});
  return Status::Ok();
}

Status DeleteBranch(const CliContext& ctx, const std::string& ref, const std::string& name) {
  ARCHIL_RETURN_IF_ERROR(ValidateBranchName(name));
  ARCHIL_ASSIGN_OR_RETURN(ApiClient api, ctx.Api());
  ARCHIL_ASSIGN_OR_RETURN(std::string id, DiskIdOf(api, ref));
  ARCHIL_ASSIGN_OR_RETURN(ApiReply r,
                          api.Call("DELETE", "/api/disks/" + id + "/branches/" + UrlEncode(name)));
  Report(ctx.options.json, ctx.options.quiet, r.data,
         "deleted branch " + name + " (its own data is freed in the background)");
  return Status::Ok();
}

}  // namespace

void AddLineageCommands(CLI::App& app, CliContext* ctx) {
  CLI::App* cps = app.add_subcommand("checkpoints", "Take, list and delete checkpoints");
  cps->require_subcommand(1);
  cps->footer(
      "Examples:\n"
      "  archil checkpoints create /mnt/data before-upgrade   through the mount, after a sync\n"
      "  archil checkpoints list data\n"
      "  archil checkpoints delete data before-upgrade");
  auto mnt = std::make_shared<std::string>();
  auto name = std::make_shared<std::string>();
  auto disk = std::make_shared<std::string>();
  auto branch = std::make_shared<std::string>();

  CLI::App* create = cps->add_subcommand(
      "create", "Checkpoint the disk mounted at MOUNTPOINT, with this client's writes");
  create->add_option("MOUNTPOINT", *mnt, "An archil mount on this machine")->required();
  create->add_option("NAME", *name, "1 to 100 of A-Z a-z 0-9 . - _")->required();
  create->callback([ctx, mnt, name] {
    ctx->action = [ctx, mnt, name] { return CreateCheckpoint(*ctx, *mnt, *name); };
  });
  CLI::App* list = cps->add_subcommand("list", "List a disk's checkpoints, oldest first");
  list->add_option("DISK", *disk, "Disk id or name")->required();
  list->add_option("--branch", *branch, "Those of this branch of the disk");
  list->callback([ctx, disk, branch] {
    ctx->action = [ctx, disk, branch] { return ListCheckpoints(*ctx, *disk, *branch); };
  });
  CLI::App* del = cps->add_subcommand("delete", "Delete a checkpoint, freeing what only it held");
  del->add_option("DISK", *disk, "Disk id or name")->required();
  del->add_option("NAME", *name, "The checkpoint")->required();
  del->add_option("--branch", *branch, "A checkpoint of this branch of the disk");
  del->callback([ctx, disk, name, branch] {
    ctx->action = [ctx, disk, name, branch] {
      return DeleteCheckpoint(*ctx, *disk, *name, *branch);
    };
  });

  CLI::App* brs = app.add_subcommand("branches", "Make, list and delete branches");
  brs->require_subcommand(1);
  brs->footer(
      "Examples:\n"
      "  archil branches create data try-1 --from-checkpoint before-upgrade   prints its disk id\n"
      "  archil mount dsk-... /mnt/try-1          a branch mounts by its id\n"
      "  archil branches list data\n"
      "  archil branches delete data try-1");
  auto args = std::make_shared<BranchArgs>();
  CLI::App* bc = brs->add_subcommand("create", "Make a writable branch from a checkpoint");
  bc->add_option("DISK", args->disk, "Disk id or name")->required();
  bc->add_option("NAME", args->name, "1 to 100 of A-Z a-z 0-9 - _, unique in the disk")->required();
  bc->add_option("--from-checkpoint", args->from_checkpoint, "The checkpoint to start from")
      ->required();
  bc->add_option("--from-branch", args->from_branch, "The branch holding that checkpoint");
  bc->callback([ctx, args] { ctx->action = [ctx, args] { return CreateBranch(*ctx, *args); }; });
  CLI::App* bl = brs->add_subcommand("list", "List the branches of a disk");
  bl->add_option("DISK", *disk, "Disk id or name")->required();
  bl->callback([ctx, disk] { ctx->action = [ctx, disk] { return ListBranches(*ctx, *disk); }; });
  CLI::App* bg = brs->add_subcommand("get", "Show one branch");
  bg->add_option("DISK", *disk, "Disk id or name")->required();
  bg->add_option("NAME", *name, "The branch")->required();
  bg->callback([ctx, disk, name] {
    ctx->action = [ctx, disk, name] { return GetBranch(*ctx, *disk, *name); };
  });
  CLI::App* bd = brs->add_subcommand("delete", "Delete a branch and the data only it holds");
  bd->add_option("DISK", *disk, "Disk id or name")->required();
  bd->add_option("NAME", *name, "The branch")->required();
  bd->callback([ctx, disk, name] {
    ctx->action = [ctx, disk, name] { return DeleteBranch(*ctx, *disk, *name); };
  });
}

}  // namespace archil
