// archil users add|list|remove DISK  (disk tokens: the credentials that mount a disk)
#include "cli/commands.h"
#include "cli/output.h"

namespace archil {
namespace {

using nlohmann::json;

Status Add(const CliContext& ctx, const std::string& disk, const std::string& nickname) {
  ARCHIL_ASSIGN_OR_RETURN(ApiClient api, ctx.Api());
  ARCHIL_ASSIGN_OR_RETURN(json d, FindDisk(api, disk));
  json body = {{"type", "token"}, {"nickname", nickname}};
  ARCHIL_ASSIGN_OR_RETURN(ApiReply r,
                          api.Call("POST", "/api/disks/" + Field(d, "id") + "/users", body));
  if (ctx.options.json) {
    PrintJson(r.data);
    return Status::Ok();
  }
  std::printf("added user %s (%s) to disk %s\ndisk token, shown only now:\n%s\n",
              Field(r.data, "identifier").c_str(), nickname.c_str(), Field(d, "id").c_str(),
              Field(r.data, "token").c_str());
  return Status::Ok();
}

Status List(const CliContext& ctx, const std::string& disk) {
  ARCHIL_ASSIGN_OR_RETURN(ApiClient api, ctx.Api());
  ARCHIL_ASSIGN_OR_RETURN(json d, FindDisk(api, disk));
  json users = d.contains("authorizedUsers") ? d["authorizedUsers"] : json::array();
  if (ctx.options.json) {
    PrintJson(users);
    return Status::Ok();
  }
  std::vector<std::vector<std::string>> rows;
  for (const json& u : users) {
    rows.push_back({Field(u, "identifier"), Field(u, "type"), Field(u, "nickname"),
                    "..." + Field(u, "tokenSuffix"), Field(u, "createdAt")});
  }
  PrintTable({"IDENTIFIER", "TYPE", "NICKNAME", "TOKEN", "CREATED"}, rows);
  return Status::Ok();
}

Status Remove(const CliContext& ctx, const std::string& disk, const std::string& identifier) {
  ARCHIL_ASSIGN_OR_RETURN(ApiClient api, ctx.Api());
  ARCHIL_ASSIGN_OR_RETURN(json d, FindDisk(api, disk));
  ARCHIL_ASSIGN_OR_RETURN(ApiReply r, api.Call("DELETE", "/api/disks/" + Field(d, "id") +
                                                             "/users/" + UrlEncode(identifier)));
  Report(ctx.options.json, ctx.options.quiet, r.data,
         "removed user " + identifier + " from disk " + Field(d, "id"));
  return Status::Ok();
}

}  // namespace

void AddUsersCommand(CLI::App& app, CliContext* ctx) {
  CLI::App* users = app.add_subcommand("users", "Manage a disk's tokens (who may mount it)");
  users->require_subcommand(1);
  auto disk = std::make_shared<std::string>();
  auto nickname = std::make_shared<std::string>("cli");
  auto identifier = std::make_shared<std::string>();

  CLI::App* add = users->add_subcommand("add", "Add a disk token (shown once)");
  add->add_option("DISK", *disk, "Disk id or name")->required();
  add->add_option("--nickname", *nickname, "A name for the token holder")->capture_default_str();
  add->callback([ctx, disk, nickname] { ctx->result = Add(*ctx, *disk, *nickname); });

  CLI::App* list = users->add_subcommand("list", "List a disk's tokens (never their secrets)");
  list->add_option("DISK", *disk, "Disk id or name")->required();
  list->callback([ctx, disk] { ctx->result = List(*ctx, *disk); });

  CLI::App* remove = users->add_subcommand("remove", "Revoke a disk token");
  remove->add_option("DISK", *disk, "Disk id or name")->required();
  remove->add_option("IDENTIFIER", *identifier, "As `archil users list` shows it")->required();
  remove->callback([ctx, disk, identifier] { ctx->result = Remove(*ctx, *disk, *identifier); });
}

}  // namespace archil
