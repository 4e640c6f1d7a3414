#include "control/api_router.h"

#include <vector>

#include "base/clock.h"
#include "base/strings.h"
#include "control/http_status.h"
#include "control/json_body.h"

namespace archil {
namespace {

using nlohmann::json;

ApiResponse Ok(int status, json data, const std::string* next_cursor = nullptr) {
  json body = {{"success", true}, {"data", std::move(data)}};
  if (next_cursor) body["nextCursor"] = next_cursor->empty() ? json(nullptr) : json(*next_cursor);
  return {status, DumpJson(body)};
}

json UserJson(const DiskUser& u, const std::string& token = "") {
  json j = {{"type", u.type},
            {"nickname", u.nickname},
            {"tokenSuffix", u.token_suffix},
            {"identifier", u.identifier},
            {"createdAt", FormatRfc3339(u.created_at)}};
  if (!token.empty()) j["token"] = token;
  return j;
}

json DiskJson(const Disk& d) {
  json users = json::array();
  for (const DiskUser& u : d.users) users.push_back(UserJson(u));
  return {{"id", d.id},
          {"name", d.name},
          {"organization", "default"},
          {"status", d.state == DiskState::kAvailable ? "available" : "deleting"},
          {"provider", "archil"},
          {"region", d.region},
          {"createdAt", FormatRfc3339(d.created_at)},
          {"rootAttrs", {{"uid", d.root.uid}, {"gid", d.root.gid}, {"mode", d.root.mode}}},
          {"authorizedUsers", std::move(users)}};
}

json KeyJson(const ApiKey& k, const std::string& token = "") {
  json j = {{"id", k.id},
            {"name", k.name},
            {"description", k.description},
            {"tokenSuffix", k.token_suffix},
            {"createdAt", FormatRfc3339(k.created_at)}};
  if (!token.empty()) j["token"] = token;
  return j;
}

std::string QueryValue(const ApiRequest& r, const char* key) {
  auto it = r.query.find(key);
  return it == r.query.end() ? std::string() : it->second;
}

Result<PageRequest> PageFromQuery(const ApiRequest& r) {
  std::optional<uint64_t> limit;
  if (r.query.count("limit")) {
    limit = ParseUint64(QueryValue(r, "limit"));
    if (!limit) return Status::InvalidArgument("limit must be an integer between 1 and 100");
  }
  PageRequest page;
  ARCHIL_ASSIGN_OR_RETURN(page.limit, ValidatePageLimit(limit));
  page.cursor = QueryValue(r, "cursor");
  return page;
}

Result<CreateDiskRequest> ParseCreateDisk(const std::string& body) {
  ARCHIL_ASSIGN_OR_RETURN(json j, ParseJsonObject(body));
  ARCHIL_RETURN_IF_ERROR(CheckKnownFields(j, {"name", "rootAttrs"}));
  CreateDiskRequest req;
  ARCHIL_ASSIGN_OR_RETURN(req.name, RequiredString(j, "name"));
  auto attrs = j.find("rootAttrs");
  if (attrs != j.end() && !attrs->is_null()) {
    if (!attrs->is_object()) return Status::InvalidArgument("rootAttrs must be an object");
    ARCHIL_RETURN_IF_ERROR(CheckKnownFields(*attrs, {"uid", "gid", "mode"}));
    ARCHIL_ASSIGN_OR_RETURN(auto uid, OptionalUint(*attrs, "uid", UINT32_MAX - 1));
    ARCHIL_ASSIGN_OR_RETURN(auto gid, OptionalUint(*attrs, "gid", UINT32_MAX - 1));
    ARCHIL_ASSIGN_OR_RETURN(auto mode, OptionalUint(*attrs, "mode", 07777));
    if (uid) req.root.uid = static_cast<uint32_t>(*uid);
    if (gid) req.root.gid = static_cast<uint32_t>(*gid);
    if (mode) req.root.mode = static_cast<uint32_t>(*mode);
  }
  return req;
}

class Dispatch {
 public:
  Dispatch(ControlService* service, const ApiRequest& r) : s_(service), r_(r) {}

  ApiResponse Run() {
    std::vector<std::string_view> parts = Split(r_.path, '/');
    // "/api/disks/x" -> ["", "api", "disks", "x"]; tolerate one trailing slash.
    if (parts.size() > 2 && parts.back().empty()) parts.pop_back();
    if (parts.size() < 3 || !parts[0].empty() || parts[1] != "api") return NoRoute();
    std::vector<std::string_view> p(parts.begin() + 2, parts.end());
    const std::string& m = r_.method;

    if (p.size() == 1 && p[0] == "health") {
      return m == "GET" ? Ok(200, {{"status", "ok"}, {"region", s_->region()}}) : NoMethod("GET");
    }
    Result<ApiKey> key = s_->Authenticate(r_.authorization);
    if (!key.ok()) return ErrorResponse(key.status());

    if (p[0] == "disks") {
      if (p.size() == 1)
        return m == "GET" ? ListDisks() : m == "POST" ? CreateDisk() : NoMethod("GET, POST");
      if (p.size() == 2)
        return m == "GET"      ? GetDisk(p[1])
               : m == "DELETE" ? DeleteDisk(p[1])
                               : NoMethod("GET, DELETE");
      if (p[2] == "users") {
        if (p.size() == 3)
          return m == "GET" ? ListUsers(p[1]) : m == "POST" ? AddUser(p[1]) : NoMethod("GET, POST");
        if (p.size() == 4) return m == "DELETE" ? RemoveUser(p[1], p[3]) : NoMethod("DELETE");
      }
      return NoRoute();
    }
    if (p[0] == "tokens") {
      if (p.size() == 1)
        return m == "GET" ? ListKeys() : m == "POST" ? CreateKey() : NoMethod("GET, POST");
      if (p.size() == 2) return m == "DELETE" ? DeleteKey(p[1]) : NoMethod("DELETE");
    }
    return NoRoute();
  }

 private:
  ApiResponse NoRoute() {
    return ErrorResponse(Status::NotFound("no such API route: " + r_.method + " " + r_.path));
  }
  ApiResponse NoMethod(const char* allowed) {
    return ErrorResponse(
        405, "method_not_allowed",
        r_.method + " is not allowed on " + r_.path + " (allowed: " + allowed + ")");
  }

  ApiResponse ListDisks() {
    Result<PageRequest> page = PageFromQuery(r_);
    if (!page.ok()) return ErrorResponse(page.status());
    Result<Page<Disk>> disks = s_->ListDisks(*page, QueryValue(r_, "name"));
    if (!disks.ok()) return ErrorResponse(disks.status());
    json items = json::array();
    for (const Disk& d : disks->items) items.push_back(DiskJson(d));
    return Ok(200, std::move(items), &disks->next_cursor);
  }

  ApiResponse CreateDisk() {
    Result<CreateDiskRequest> req = ParseCreateDisk(r_.body);
    if (!req.ok()) return ErrorResponse(req.status());
    Result<CreatedDisk> created = s_->CreateDisk(*req);
    if (!created.ok()) return ErrorResponse(created.status());
    json users = json::array();
    for (const DiskUser& u : created->disk.users) users.push_back(UserJson(u, created->token));
    json data = {{"diskId", created->disk.id},
                 {"created", created->created},
                 {"authorizedUsers", std::move(users)},
                 {"disk", DiskJson(created->disk)}};
    return Ok(created->created ? 201 : 200, std::move(data));
  }

  ApiResponse GetDisk(std::string_view id) {
    Result<Disk> disk = s_->GetDisk(id);
    return disk.ok() ? Ok(200, DiskJson(*disk)) : ErrorResponse(disk.status());
  }

  ApiResponse DeleteDisk(std::string_view id) {
    Status s = s_->DeleteDisk(id);
    if (!s.ok()) return ErrorResponse(s);
    return Ok(200, {{"diskId", id}, {"status", "deleting"}});
  }

  ApiResponse ListUsers(std::string_view disk_id) {
    Result<Disk> disk = s_->GetDisk(disk_id);
    if (!disk.ok()) return ErrorResponse(disk.status());
    json users = json::array();
    for (const DiskUser& u : disk->users) users.push_back(UserJson(u));
    return Ok(200, std::move(users));
  }

  ApiResponse AddUser(std::string_view disk_id) {
    Result<json> j = ParseJsonObject(r_.body);
    if (!j.ok()) return ErrorResponse(j.status());
    Status known = CheckKnownFields(*j, {"type", "nickname"});
    if (!known.ok()) return ErrorResponse(known);
    Result<std::optional<std::string>> type = OptionalString(*j, "type");
    if (!type.ok()) return ErrorResponse(type.status());
    if (type->value_or("token") != "token") {
      return ErrorResponse(Status::InvalidArgument("unsupported user type: only \"token\" exists"));
    }
    Result<std::string> nickname = RequiredString(*j, "nickname");
    if (!nickname.ok()) return ErrorResponse(nickname.status());
    Result<CreatedUser> user = s_->AddDiskUser(disk_id, *nickname);
    if (!user.ok()) return ErrorResponse(user.status());
    return Ok(201, UserJson(user->user, user->token));
  }

  ApiResponse RemoveUser(std::string_view disk_id, std::string_view last) {
    // Both DELETE /users/{identifier} (SPEC.md) and Archil's /users/token?identifier=X.
    std::string identifier(last);
    if (last == "token" && r_.query.count("identifier")) identifier = QueryValue(r_, "identifier");
    Status s = s_->RemoveDiskUser(disk_id, identifier);
    if (!s.ok()) return ErrorResponse(s);
    return Ok(200, {{"message", "user removed"}, {"identifier", identifier}});
  }

  ApiResponse ListKeys() {
    Result<PageRequest> page = PageFromQuery(r_);
    if (!page.ok()) return ErrorResponse(page.status());
    Result<Page<ApiKey>> keys = s_->ListApiKeys(*page);
    if (!keys.ok()) return ErrorResponse(keys.status());
    json items = json::array();
    for (const ApiKey& k : keys->items) items.push_back(KeyJson(k));
    return Ok(200, {{"tokens", std::move(items)}}, &keys->next_cursor);
  }

  ApiResponse CreateKey() {
    Result<json> j = ParseJsonObject(r_.body);
    if (!j.ok()) return ErrorResponse(j.status());
    Status known = CheckKnownFields(*j, {"name", "description"});
    if (!known.ok()) return ErrorResponse(known);
    Result<std::string> name = RequiredString(*j, "name");
    if (!name.ok()) return ErrorResponse(name.status());
    Result<std::optional<std::string>> description = OptionalString(*j, "description");
    if (!description.ok()) return ErrorResponse(description.status());
    Result<CreatedApiKey> key = s_->CreateApiKey(*name, description->value_or(""));
    if (!key.ok()) return ErrorResponse(key.status());
    return Ok(201, KeyJson(key->key, key->token));
  }

  ApiResponse DeleteKey(std::string_view id) {
    Status s = s_->DeleteApiKey(id);
    if (!s.ok()) return ErrorResponse(s);
    return Ok(200, {{"message", "API key deleted"}, {"id", id}});
  }

  ControlService* s_;
  const ApiRequest& r_;
};

}  // namespace

ApiResponse ErrorResponse(int http_status, std::string_view code, std::string_view message) {
  json body = {{"success", false}, {"error", message}, {"code", code}};
  return {http_status, DumpJson(body)};
}

ApiResponse ErrorResponse(const Status& status) {
  return ErrorResponse(HttpStatusFor(status.code()), CodeName(status.code()), status.message());
}

ApiResponse ApiRouter::Handle(const ApiRequest& request) const {
  return Dispatch(service_, request).Run();
}

}  // namespace archil
