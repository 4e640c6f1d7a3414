// archil users add|list|remove DISK  (disk tokens: the credentials that mount a disk)
#include "cli/commands.h"
#include "cli/output.h"

namespace archil {
namespace {

using nlohmann::json;

// The users routes take a branch's id or a deleted root's (kept for its branches) as well as a
// live disk's, so an id goes to them as it is; only a name is looked up (names are live disks').
std::string UsersPath(const std::string& disk_id) { return "/api/disks/" + disk_id + "/users"; }

Status Add(const CliContext& ctx, const std::string& disk, const std::string& nickname) {
  ARCHIL_ASSIGN_OR_RETURN(ApiClient api, ctx.Api());
  ARCHIL_ASSIGN_OR_RETURN(std::string id, DiskIdOf(api, disk));
  wire::AddUserRequest body{"token", nickname};
  ARCHIL_ASSIGN_OR_RETURN(ApiReply r, api.Call("POST", UsersPath(id), wire::ToJson(body)));
  ARCHIL_ASSIGN_OR_RETURN(wire::User user, wire::DecodeUser(r.data));
  if (!user.token) return Status::Corruption("the server added the user but sent no token");
  if (ctx.options.json) {
    PrintJson(r.data);
  } else if (ctx.options.quiet) {
    std::printf("%s\n", user.token->c_str());  // what a script asks for: the token alone
  } else {
    std::printf("added user %s (%s) to disk %s\ndisk token, shown only now:\n%s\n",
                user.identifier.c_str(), nickname.c_str(), id.c_str(), user.token->c_str());
  }
  return Status::Ok();
}

Status ListUsers(const CliContext& ctx, const std::string& disk) {
  ARCHIL_ASSIGN_OR_RETURN(ApiClient api, ctx.Api());
  ARCHIL_ASSIGN_OR_RETURN(std::string id, DiskIdOf(api, disk));
  ARCHIL_ASSIGN_OR_RETURN(ApiReply r, api.Call("GET", UsersPath(id)));
  if (!r.data.is_array()) return Status::Corruption("the server's list of users is not a list");
  std::vector<std::vector<std::string>> rows;
  for (const json& j : r.data) {
    ARCHIL_ASSIGN_OR_RETURN(wire::User u, wire::DecodeUser(j));
    rows.push_back({u.identifier, u.type, u.nickname, "..." + u.token_suffix, u.created_at});
  }
  if (ctx.options.json) {
    PrintJson(r.data);
    return Status::Ok();
  }
  PrintTable(ctx.options.quiet, {"IDENTIFIER", "TYPE", "NICKNAME", "TOKEN", "CREATED"}, rows);
  return Status::Ok();
}

Status Remove(const CliContext& ctx, const std::string& disk, const std::string& identifier) {
  ARCHIL_ASSIGN_OR_RETURN(ApiClient api, ctx.Api());
  ARCHIL_ASSIGN_OR_RETURN(std::string id, DiskIdOf(api, disk));
  ARCHIL_ASSIGN_OR_RETURN(ApiReply r,
                          api.Call("DELETE", UsersPath(id) + "/" + UrlEncode(identifier)));
  Report(ctx.options.json, ctx.options.quiet, r.data,
         "removed user " + identifier + " from disk " + id +
             " (its mounts, of the disk and its branches, end now)");
  return Status::Ok();
}

}  // namespace

void AddUsersCommand(CLI::App& app, CliContext* ctx) {
  CLI::App* users = app.add_subcommand("users", "Manage a disk's tokens (who may mount it)");
  users->require_subcommand(1);
  users->footer(
      "Examples:\n"
      "  archil users add data --nickname laptop -q > data.token   a new token for disk 'data'\n"
      "  archil users list data\n"
      "  archil users remove data tok-...          revoke it; its mounts end at once");
  auto disk = std::make_shared<std::string>();
  auto nickname = std::make_shared<std::string>("cli");
  auto identifier = std::make_shared<std::string>();

  CLI::App* add = users->add_subcommand("add", "Add a disk token (shown once)");
  add->add_option("DISK", *disk, "Disk id or name")->required();
  add->add_option("--nickname", *nickname, "A name for the token holder")->capture_default_str();
  add->callback([ctx, disk, nickname] {
    ctx->action = [ctx, disk, nickname] { return Add(*ctx, *disk, *nickname); };
  });

  CLI::App* list = users->add_subcommand("list", "List a disk's tokens (never their secrets)");
  list->add_option("DISK", *disk, "Disk id or name")->required();
  list->callback([ctx, disk] { ctx->action = [ctx, disk] { return ListUsers(*ctx, *disk); }; });

  CLI::App* remove = users->add_subcommand("remove", "Revoke a disk token");
  remove->add_option("DISK", *disk, "Disk id or name")->required();
  remove->add_option("IDENTIFIER", *identifier, "As `archil users list` shows it")->required();
  remove->callback([ctx, disk, identifier] {
    ctx->action = [ctx, disk, identifier] { return Remove(*ctx, *disk, *identifier); };
  });
}

}  // namespace archil
