// archil keys create|list|delete  (control-plane API keys)
#include "cli/commands.h"
#include "cli/output.h"

namespace archil {
namespace {

using nlohmann::json;

Status CreateKey(const CliContext& ctx, const std::string& name, const std::string& description) {
  ARCHIL_ASSIGN_OR_RETURN(ApiClient api, ctx.Api());
  wire::CreateKeyRequest body{name, description};
  ARCHIL_ASSIGN_OR_RETURN(ApiReply r, api.Call("POST", "/api/tokens", wire::ToJson(body)));
  ARCHIL_ASSIGN_OR_RETURN(wire::ApiKey key, wire::DecodeApiKey(r.data));
  if (!key.token) return Status::Corruption("the server created the key but sent no token");
  if (ctx.options.json) {
    PrintJson(r.data);
    return Status::Ok();
  }
  if (ctx.options.quiet) {
    std::printf("%s\n", key.token->c_str());  // what a script asks for: the key alone
    return Status::Ok();
  }
  std::printf("created API key %s (%s)\nkey, shown only now (export ARCHIL_API_KEY=...):\n%s\n",
              key.id.c_str(), name.c_str(), key.token->c_str());
  return Status::Ok();
}

Status ListKeys(const CliContext& ctx) {
  ARCHIL_ASSIGN_OR_RETURN(ApiClient api, ctx.Api());
  json all = json::array();
  std::vector<std::vector<std::string>> rows;
  std::string cursor;
  do {
    std::string target = "/api/tokens?limit=100";
    if (!cursor.empty()) target += "&cursor=" + UrlEncode(cursor);
    ARCHIL_ASSIGN_OR_RETURN(ApiReply r, api.Call("GET", target));
    ARCHIL_ASSIGN_OR_RETURN(std::vector<wire::ApiKey> keys, wire::DecodeKeyList(r.data));
    for (const wire::ApiKey& k : keys) {
      rows.push_back({k.id, k.name, "..." + k.token_suffix, k.created_at, k.description});
    }
    for (auto& k : r.data["tokens"]) all.push_back(std::move(k));
    cursor = r.next_cursor;
  } while (!cursor.empty());
  if (ctx.options.json) {
    PrintJson(all);
    return Status::Ok();
  }
  PrintTable(ctx.options.quiet, {"ID", "NAME", "KEY", "CREATED", "DESCRIPTION"}, rows);
  return Status::Ok();
}

Status DeleteKey(const CliContext& ctx, const std::string& id) {
  ARCHIL_ASSIGN_OR_RETURN(ApiClient api, ctx.Api());
  ARCHIL_ASSIGN_OR_RETURN(ApiReply r, api.Call("DELETE", "/api/tokens/" + UrlEncode(id)));
  Report(ctx.options.json, ctx.options.quiet, r.data, "deleted API key " + id);
  return Status::Ok();
}

}  // namespace

void AddKeysCommand(CLI::App& app, CliContext* ctx) {
  CLI::App* keys = app.add_subcommand("keys", "Manage control-plane API keys");
  keys->require_subcommand(1);
  keys->footer(
      "Examples:\n"
      "  export ARCHIL_API_KEY=$(archil keys create ci -q --description 'CI jobs')\n"
      "  archil keys list\n"
      "  archil keys delete key-...");

  auto name = std::make_shared<std::string>();
  auto description = std::make_shared<std::string>();
  CLI::App* create = keys->add_subcommand("create", "Create an API key (shown once)");
  create->add_option("NAME", *name, "A name to recognise the key by")->required();
  create->add_option("--description", *description, "Free text, up to 500 bytes");
  create->callback([ctx, name, description] {
    ctx->action = [ctx, name, description] { return CreateKey(*ctx, *name, *description); };
  });

  CLI::App* list = keys->add_subcommand("list", "List API keys (never their secrets)");
  list->callback([ctx] { ctx->action = [ctx] { return ListKeys(*ctx); }; });

  auto id = std::make_shared<std::string>();
  CLI::App* del = keys->add_subcommand("delete", "Revoke an API key");
  del->add_option("ID", *id, "Key id, as `archil keys list` shows it")->required();
  del->callback([ctx, id] { ctx->action = [ctx, id] { return DeleteKey(*ctx, *id); }; });
}

}  // namespace archil
