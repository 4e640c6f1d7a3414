// archil disks create|list|get|delete|allowed-ips
#include <algorithm>
#include <cstdio>

#include "api/names.h"
#include "base/ids.h"
#include "base/ip_range.h"
#include "base/strings.h"
#include "cli/commands.h"
#include "cli/output.h"

namespace archil {
namespace {

using nlohmann::json;

std::vector<std::string> DiskRow(const wire::Disk& d) {
  return {d.id, d.name, d.status, d.region, d.created_at, std::to_string(d.users.size())};
}

const std::vector<std::string> kDiskHeader = {"ID", "NAME", "STATUS", "REGION", "CREATED", "USERS"};

struct CreateArgs {
  std::string name;
  std::optional<uint32_t> uid, gid;
  std::string mode;
};

Status CreateDisk(const CliContext& ctx, const CreateArgs& a) {
  ARCHIL_RETURN_IF_ERROR(ValidateDiskName(a.name));
  wire::CreateDiskRequest body{a.name, a.uid, a.gid, std::nullopt};
  if (!a.mode.empty()) {
    char* end = nullptr;
    unsigned long mode = std::strtoul(a.mode.c_str(), &end, 8);
    if (*end != '\0' || mode > 07777) {
      return Status::InvalidArgument("--mode must be octal permission bits, e.g. 0755");
    }
    body.mode = static_cast<uint32_t>(mode);
  }
  ARCHIL_ASSIGN_OR_RETURN(ApiClient api, ctx.Api());
  ARCHIL_ASSIGN_OR_RETURN(ApiReply r, api.Call("POST", "/api/disks", wire::ToJson(body)));
  ARCHIL_ASSIGN_OR_RETURN(wire::CreateDiskReply created, wire::DecodeCreateDiskReply(r.data));
  if (ctx.options.json) {
    PrintJson(r.data);
    return Status::Ok();
  }
  const std::string& id = created.disk_id;
  std::string token;
  if (!created.users.empty()) token = created.users[0].token.value_or("");
  if (created.created) {
    if (token.empty()) return Status::Corruption("the server created the disk but sent no token");
    if (ctx.options.quiet) {
      // What a script asks for: the id, then the token, one per line.
      std::printf("%s\n%s\n", id.c_str(), token.c_str());
      return Status::Ok();
    }
    std::printf("created disk %s (%s)\n", id.c_str(), a.name.c_str());
    std::printf("disk token, shown only now (export ARCHIL_MOUNT_TOKEN=...):\n%s\n", token.c_str());
  } else if (ctx.options.quiet) {
    std::printf("%s\n", id.c_str());
  } else {
    std::printf(
        "disk %s (%s) already exists with these settings; its token is not shown again "
        "(add one with `archil users add %s`)\n",
        id.c_str(), a.name.c_str(), id.c_str());
  }
  return Status::Ok();
}

Status ListDisks(const CliContext& ctx, const std::string& name, std::optional<uint32_t> limit) {
  ARCHIL_ASSIGN_OR_RETURN(ApiClient api, ctx.Api());
  json all = json::array();
  std::vector<std::vector<std::string>> rows;
  std::string cursor;
  do {
    std::string target = "/api/disks?limit=" + std::to_string(limit.value_or(100));
    if (!name.empty()) target += "&name=" + UrlEncode(name);
    if (!cursor.empty()) target += "&cursor=" + UrlEncode(cursor);
    ARCHIL_ASSIGN_OR_RETURN(ApiReply r, api.Call("GET", target));
    ARCHIL_ASSIGN_OR_RETURN(std::vector<wire::Disk> disks, wire::DecodeDiskList(r.data));
    for (const wire::Disk& d : disks) rows.push_back(DiskRow(d));
    for (auto& d : r.data) all.push_back(std::move(d));
    cursor = limit ? "" : r.next_cursor;  // --limit: one page only
  } while (!cursor.empty());
  if (ctx.options.json) {
    PrintJson(all);
    return Status::Ok();
  }
  PrintTable(ctx.options.quiet, kDiskHeader, rows);
  return Status::Ok();
}

// "  tier: 12 MiB in 1 segments wait for the bucket (oldest 3 s), uploads at 95 MiB/s, writes
// accepted": what GET /api/disks/{id} says under "tier" (a server with --object-store).
std::string TierLine(const nlohmann::json& t) {
  auto num = [&](const char* k) { return t.value(k, int64_t{0}); };
  return "tier: " + std::to_string(num("bytesToUpload") >> 20) + " MiB in " +
         std::to_string(num("segmentsToUpload")) + " segments wait for the bucket (oldest " +
         std::to_string(num("oldestToUploadMs") / 1000) + " s), uploads at " +
         std::to_string(num("uploadBytesPerSecond") >> 20) + " MiB/s, writes " +
         t.value("writes", std::string("?"));
}

Status Get(const CliContext& ctx, const std::string& ref) {
  ARCHIL_ASSIGN_OR_RETURN(ApiClient api, ctx.Api());
  ARCHIL_ASSIGN_OR_RETURN(FoundDisk d, FindDisk(api, ref));
  // A disk found by name came from the list, which leaves out what GET /api/disks/{id} adds.
  nlohmann::json raw = d.raw;
  if (!raw.contains("tier")) {
    ARCHIL_ASSIGN_OR_RETURN(ApiReply r, api.Call("GET", "/api/disks/" + d.disk.id));
    raw = std::move(r.data);
  }
  if (ctx.options.json) {
    PrintJson(raw);
    return Status::Ok();
  }
  PrintTable(ctx.options.quiet, kDiskHeader, {DiskRow(d.disk)});
  if (!ctx.options.quiet && raw.is_object() && raw.contains("tier") && raw["tier"].is_object()) {
    std::printf("%s\n", TierLine(raw["tier"]).c_str());
  }
  return Status::Ok();
}

Status DeleteDisk(const CliContext& ctx, const std::string& ref) {
  ARCHIL_ASSIGN_OR_RETURN(ApiClient api, ctx.Api());
  std::string id = ref;
  if (!DiskId::IsValid(ref)) {
    ARCHIL_ASSIGN_OR_RETURN(FoundDisk d, FindDisk(api, ref));
    id = d.disk.id;
  }
  ARCHIL_ASSIGN_OR_RETURN(ApiReply r, api.Call("DELETE", "/api/disks/" + id));
  const bool hidden = r.data.is_object() && r.data.value("status", "") == "hidden";
  Report(ctx.options.json, ctx.options.quiet, r.data,
         hidden ? "deleted disk " + id + "; " + r.data.value("message", std::string())
                : "deleted disk " + id + " (its data is removed in the background)");
  return Status::Ok();
}

// archil disks allowed-ips DISK [--add CIDR]... [--remove CIDR]...: shows the list, or changes it
// by a GET, the change, and a PUT of the whole list (the server normalizes and answers it).
Status AllowedIps(const CliContext& ctx, const std::string& ref,
                  const std::vector<std::string>& add, const std::vector<std::string>& remove) {
  std::vector<IpRange> to_add, to_remove;
  for (const std::string& a : add) {
    ARCHIL_ASSIGN_OR_RETURN(IpRange r, ParseIpRange(a));
    to_add.push_back(r);
  }
  for (const std::string& a : remove) {
    ARCHIL_ASSIGN_OR_RETURN(IpRange r, ParseIpRange(a));
    to_remove.push_back(r);
  }
  ARCHIL_ASSIGN_OR_RETURN(ApiClient api, ctx.Api());
  ARCHIL_ASSIGN_OR_RETURN(std::string id, DiskIdOf(api, ref));
  const std::string path = "/api/disks/" + id + "/allowed-ips";
  ARCHIL_ASSIGN_OR_RETURN(ApiReply r, api.Call("GET", path));
  if (!add.empty() || !remove.empty()) {
    ARCHIL_ASSIGN_OR_RETURN(wire::AllowedIps now, wire::DecodeAllowedIps(r.data));
    wire::AllowedIps next;
    for (const std::string& e : now.allowed_ips) {
      Result<IpRange> parsed = ParseIpRange(e);
      const bool removed =
          parsed.ok() && std::find(to_remove.begin(), to_remove.end(), *parsed) != to_remove.end();
      if (!removed) next.allowed_ips.push_back(e);
    }
    for (const IpRange& a : to_add) next.allowed_ips.push_back(a.ToString());
    ARCHIL_ASSIGN_OR_RETURN(r, api.Call("PUT", path, wire::ToJson(next)));
  }
  ARCHIL_ASSIGN_OR_RETURN(wire::AllowedIps shown, wire::DecodeAllowedIps(r.data));
  if (ctx.options.json) {
    PrintJson(r.data);
  } else if (shown.allowed_ips.empty()) {
    if (!ctx.options.quiet) {
      std::printf("disk %s allows connections from any address\n", id.c_str());
    }
  } else {
    for (const std::string& e : shown.allowed_ips) std::printf("%s\n", e.c_str());
  }
  return Status::Ok();
}

}  // namespace

Result<FoundDisk> FindDisk(const ApiClient& api, const std::string& ref) {
  if (DiskId::IsValid(ref)) {
    ARCHIL_ASSIGN_OR_RETURN(ApiReply r, api.Call("GET", "/api/disks/" + ref));
    ARCHIL_ASSIGN_OR_RETURN(wire::Disk d, wire::DecodeDisk(r.data));
    if (d.id != ref) return Status::Corruption("asked for disk " + ref + ", got " + d.id);
    return FoundDisk{std::move(r.data), std::move(d)};
  }
  Status valid = ValidateDiskName(ref);
  if (!valid.ok()) {
    return Status::InvalidArgument("'" + ref +
                                   "' is neither a disk id (dsk-<16 hex>) nor a disk name");
  }
  ARCHIL_ASSIGN_OR_RETURN(ApiReply r, api.Call("GET", "/api/disks?limit=1&name=" + UrlEncode(ref)));
  ARCHIL_ASSIGN_OR_RETURN(std::vector<wire::Disk> disks, wire::DecodeDiskList(r.data));
  if (disks.empty()) return Status::NotFound("no disk named '" + ref + "'");
  return FoundDisk{r.data[0], std::move(disks[0])};
}

Result<std::string> DiskIdOf(const ApiClient& api, const std::string& ref) {
  if (DiskId::IsValid(ref)) return ref;
  ARCHIL_ASSIGN_OR_RETURN(FoundDisk d, FindDisk(api, ref));
  return d.disk.id;
}

void AddDisksCommand(CLI::App& app, CliContext* ctx) {
  CLI::App* disks = app.add_subcommand("disks", "Create, list, inspect and delete disks");
  disks->require_subcommand(1);
  disks->footer(
      "Examples:\n"
      "  archil disks create data                  a disk; prints its token once\n"
      "  archil disks list --json | jq -r '.[].name'\n"
      "  archil disks get data                     its id, state, size and tier\n"
      "  archil disks delete data\n"
      "  archil disks allowed-ips data --add 10.0.0.0/8   only clients from 10.0.0.0/8 may mount "
      "it");

  auto create_args = std::make_shared<CreateArgs>();
  CLI::App* create = disks->add_subcommand("create", "Create a disk (idempotent by name)");
  create->add_option("NAME", create_args->name, "1 to 100 of A-Z a-z 0-9 - _")->required();
  create->add_option("--uid", create_args->uid, "Owner uid of the root directory (default 0)");
  create->add_option("--gid", create_args->gid, "Owner gid of the root directory (default 0)");
  create->add_option("--mode", create_args->mode,
                     "Octal mode of the root directory (default 0755)");
  create->callback([ctx, create_args] {
    ctx->action = [ctx, create_args] { return CreateDisk(*ctx, *create_args); };
  });

  auto list_name = std::make_shared<std::string>();
  auto list_limit = std::make_shared<std::optional<uint32_t>>();
  CLI::App* list = disks->add_subcommand("list", "List disks (all pages unless --limit)");
  list->add_option("--name", *list_name, "Only the disk with this exact name");
  list->add_option("--limit", *list_limit, "At most this many (1-100), one page")
      ->check(CLI::Range(1, 100));
  list->callback([ctx, list_name, list_limit] {
    ctx->action = [ctx, list_name, list_limit] { return ListDisks(*ctx, *list_name, *list_limit); };
  });

  auto ref = std::make_shared<std::string>();
  CLI::App* get = disks->add_subcommand("get", "Show one disk");
  get->add_option("DISK", *ref, "Disk id or name")->required();
  get->callback([ctx, ref] { ctx->action = [ctx, ref] { return Get(*ctx, *ref); }; });

  CLI::App* del = disks->add_subcommand("delete", "Delete a disk and, in the background, its data");
  del->add_option("DISK", *ref, "Disk id or name")->required();
  del->callback([ctx, ref] { ctx->action = [ctx, ref] { return DeleteDisk(*ctx, *ref); }; });

  auto add = std::make_shared<std::vector<std::string>>();
  auto remove = std::make_shared<std::vector<std::string>>();
  CLI::App* ips = disks->add_subcommand(
      "allowed-ips", "Show or change the client addresses that may mount a disk (none: any)");
  ips->add_option("DISK", *ref, "Disk id or name")->required();
  ips->add_option("--add", *add, "Allow an address or CIDR range (10.0.0.0/8, 2001:db8::/32)")
      ->take_all()
      ->allow_extra_args(false);
  ips->add_option("--remove", *remove, "Remove an address or range from the list")
      ->take_all()
      ->allow_extra_args(false);
  ips->callback([ctx, ref, add, remove] {
    ctx->action = [ctx, ref, add, remove] { return AllowedIps(*ctx, *ref, *add, *remove); };
  });
}

}  // namespace archil
