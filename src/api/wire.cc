#include "api/wire.h"

#include "api/json_body.h"

namespace archil::wire {
namespace {

using nlohmann::json;

// A server's reply is read with the same field readers as a request body (api/json_body.h), but
// what does not decode is Corruption naming what the server sent, not InvalidArgument: the fault
// is the server's. Unknown fields are ignored (a newer server may add some).
Status FromServer(std::string_view what, const Status& s) {
  if (s.ok() || s.code() == Status::Code::kCorruption) return s;  // ok, or already named
  return Status::Corruption("server sent a " + std::string(what) +
                            " that does not decode: " + s.message());
}

template <typename T>
Result<T> FromServer(std::string_view what, Result<T> r) {
  if (r.ok()) return r;
  return FromServer(what, r.status());
}

// The member `field`, or null when absent.
const json& Member(const json& j, const char* field) {
  static const json kNull;
  auto it = j.find(field);
  return it == j.end() ? kNull : *it;
}

template <typename T, typename Fn>
Result<std::vector<T>> DecodeArray(const json& j, const char* what, Fn decode) {
  if (!j.is_array()) {
    return Status::Corruption(std::string("server sent a ") + what + " that is not a list");
  }
  std::vector<T> out;
  out.reserve(j.size());
  for (const json& item : j) {
    ARCHIL_ASSIGN_OR_RETURN(T v, decode(item));
    out.push_back(std::move(v));
  }
  return out;
}

}  // namespace

json ToJson(const RootAttrs& v) { return {{"uid", v.uid}, {"gid", v.gid}, {"mode", v.mode}}; }

json ToJson(const User& v) {
  json j = {{"type", v.type},
            {"nickname", v.nickname},
            {"tokenSuffix", v.token_suffix},
            {"identifier", v.identifier},
            {"createdAt", v.created_at}};
  if (v.token) j["token"] = *v.token;
  return j;
}

json ToJson(const Disk& v) {
  json users = json::array();
  for (const User& u : v.users) users.push_back(ToJson(u));
  json j = {{"id", v.id},
            {"name", v.name},
            {"organization", v.organization},
            {"status", v.status},
            {"provider", v.provider},
            {"region", v.region},
            {"createdAt", v.created_at},
            {"rootAttrs", ToJson(v.root)},
            {"authorizedUsers", std::move(users)}};
  if (v.branch_name) j["branchName"] = *v.branch_name;
  if (v.root_id) j["rootId"] = *v.root_id;
  if (v.parent_id) j["parentId"] = *v.parent_id;
  return j;
}

json ToJson(const CreateDiskRequest& v) {
  json j = {{"name", v.name}};
  if (v.uid || v.gid || v.mode) {
    json attrs = json::object();
    if (v.uid) attrs["uid"] = *v.uid;
    if (v.gid) attrs["gid"] = *v.gid;
    if (v.mode) attrs["mode"] = *v.mode;
    j["rootAttrs"] = std::move(attrs);
  }
  return j;
}

json ToJson(const CreateDiskReply& v) {
  json users = json::array();
  for (const User& u : v.users) users.push_back(ToJson(u));
  return {{"diskId", v.disk_id},
          {"created", v.created},
          {"authorizedUsers", std::move(users)},
          {"disk", ToJson(v.disk)}};
}

json ToJson(const AllowedIps& v) { return {{"allowedIps", v.allowed_ips}}; }

json ToJson(const AddUserRequest& v) { return {{"type", v.type}, {"nickname", v.nickname}}; }

json ToJson(const ApiKey& v) {
  json j = {{"id", v.id},
            {"name", v.name},
            {"description", v.description},
            {"tokenSuffix", v.token_suffix},
            {"createdAt", v.created_at}};
  if (v.token) j["token"] = *v.token;
  return j;
}

json ToJson(const CreateKeyRequest& v) {
  json j = {{"name", v.name}};
  if (!v.description.empty()) j["description"] = v.description;
  return j;
}

json ToJson(const Checkpoint& v) {
  return {{"checkpoint_name", v.name}, {"status", v.status}, {"created_at", v.created_at}};
}

json ToJson(const Branch& v) {
  return {{"branch_name", v.name},    {"filesystem_id", v.filesystem_id},
          {"parent_id", v.parent_id}, {"from_checkpoint_name", v.from_checkpoint},
          {"status", v.status},       {"created_at", v.created_at}};
}

json ToJson(const CreateBranchRequest& v) {
  json j = {{"branch_name", v.branch_name}, {"from_checkpoint", v.from_checkpoint}};
  if (v.from_branch) j["from_branch"] = *v.from_branch;
  return j;
}

Result<CreateBranchRequest> DecodeCreateBranchRequest(std::string_view body) {
  ARCHIL_ASSIGN_OR_RETURN(json j, ParseJsonObject(body));
  ARCHIL_RETURN_IF_ERROR(CheckKnownFields(j, {"branch_name", "from_checkpoint", "from_branch"}));
  CreateBranchRequest req;
  ARCHIL_ASSIGN_OR_RETURN(req.branch_name, RequiredString(j, "branch_name"));
  ARCHIL_ASSIGN_OR_RETURN(req.from_checkpoint, RequiredString(j, "from_checkpoint"));
  ARCHIL_ASSIGN_OR_RETURN(req.from_branch, OptionalString(j, "from_branch"));
  return req;
}

Result<CreateDiskRequest> DecodeCreateDiskRequest(std::string_view body) {
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
    if (uid) req.uid = static_cast<uint32_t>(*uid);
    if (gid) req.gid = static_cast<uint32_t>(*gid);
    if (mode) req.mode = static_cast<uint32_t>(*mode);
  }
  return req;
}

namespace {

// The member `field` of `j`: an array of strings (InvalidArgument naming it otherwise).
Result<std::vector<std::string>> RequiredStringArray(const json& j, const char* field) {
  auto bad = [](std::string m) { return Status::InvalidArgument(std::move(m)); };
  auto it = j.find(field);
  if (it == j.end() || it->is_null()) return bad(std::string(field) + " is required");
  if (!it->is_array()) return bad(std::string(field) + " must be an array of strings");
  std::vector<std::string> out;
  out.reserve(it->size());
  for (const json& e : *it) {
    if (!e.is_string()) return bad(std::string(field) + " must be an array of strings");
    out.push_back(e.get<std::string>());
  }
  return out;
}

}  // namespace

Result<AllowedIps> DecodeAllowedIpsRequest(std::string_view body) {
  ARCHIL_ASSIGN_OR_RETURN(json j, ParseJsonObject(body));
  ARCHIL_RETURN_IF_ERROR(CheckKnownFields(j, {"allowedIps"}));
  AllowedIps req;
  ARCHIL_ASSIGN_OR_RETURN(req.allowed_ips, RequiredStringArray(j, "allowedIps"));
  return req;
}

Result<AddUserRequest> DecodeAddUserRequest(std::string_view body) {
  ARCHIL_ASSIGN_OR_RETURN(json j, ParseJsonObject(body));
  ARCHIL_RETURN_IF_ERROR(CheckKnownFields(j, {"type", "nickname"}));
  AddUserRequest req;
  ARCHIL_ASSIGN_OR_RETURN(std::optional<std::string> type, OptionalString(j, "type"));
  req.type = type.value_or("token");
  if (req.type != "token") {
    return Status::InvalidArgument("unsupported user type: only \"token\" exists");
  }
  ARCHIL_ASSIGN_OR_RETURN(req.nickname, RequiredString(j, "nickname"));
  return req;
}

Result<CreateKeyRequest> DecodeCreateKeyRequest(std::string_view body) {
  ARCHIL_ASSIGN_OR_RETURN(json j, ParseJsonObject(body));
  ARCHIL_RETURN_IF_ERROR(CheckKnownFields(j, {"name", "description"}));
  CreateKeyRequest req;
  ARCHIL_ASSIGN_OR_RETURN(req.name, RequiredString(j, "name"));
  ARCHIL_ASSIGN_OR_RETURN(std::optional<std::string> description, OptionalString(j, "description"));
  req.description = description.value_or("");
  return req;
}

Result<User> DecodeUser(const json& j) {
  return FromServer("disk user", [&]() -> Result<User> {
    ARCHIL_RETURN_IF_ERROR(RequireObject(j, "a disk user"));
    User u;
    ARCHIL_ASSIGN_OR_RETURN(u.identifier, RequiredString(j, "identifier"));
    ARCHIL_ASSIGN_OR_RETURN(u.type, StringOr(j, "type", ""));
    ARCHIL_ASSIGN_OR_RETURN(u.nickname, StringOr(j, "nickname", ""));
    ARCHIL_ASSIGN_OR_RETURN(u.token_suffix, StringOr(j, "tokenSuffix", ""));
    ARCHIL_ASSIGN_OR_RETURN(u.created_at, StringOr(j, "createdAt", ""));
    ARCHIL_ASSIGN_OR_RETURN(u.token, OptionalString(j, "token"));
    return u;
  }());
}

Result<Disk> DecodeDisk(const json& j) {
  return FromServer("disk", [&]() -> Result<Disk> {
    ARCHIL_RETURN_IF_ERROR(RequireObject(j, "a disk"));
    Disk d;
    ARCHIL_ASSIGN_OR_RETURN(d.id, RequiredString(j, "id"));
    ARCHIL_ASSIGN_OR_RETURN(d.name, RequiredString(j, "name"));
    ARCHIL_ASSIGN_OR_RETURN(d.organization, StringOr(j, "organization", ""));
    ARCHIL_ASSIGN_OR_RETURN(d.status, StringOr(j, "status", ""));
    ARCHIL_ASSIGN_OR_RETURN(d.provider, StringOr(j, "provider", ""));
    ARCHIL_ASSIGN_OR_RETURN(d.region, StringOr(j, "region", ""));
    ARCHIL_ASSIGN_OR_RETURN(d.created_at, StringOr(j, "createdAt", ""));
    if (const json& attrs = Member(j, "rootAttrs"); !attrs.is_null()) {
      ARCHIL_RETURN_IF_ERROR(RequireObject(attrs, "rootAttrs"));
      ARCHIL_ASSIGN_OR_RETURN(uint64_t uid, RequiredUint(attrs, "uid", UINT32_MAX));
      ARCHIL_ASSIGN_OR_RETURN(uint64_t gid, RequiredUint(attrs, "gid", UINT32_MAX));
      ARCHIL_ASSIGN_OR_RETURN(uint64_t mode, RequiredUint(attrs, "mode", UINT32_MAX));
      d.root = RootAttrs{static_cast<uint32_t>(uid), static_cast<uint32_t>(gid),
                         static_cast<uint32_t>(mode)};
    }
    if (const json& users = Member(j, "authorizedUsers"); !users.is_null()) {
      ARCHIL_ASSIGN_OR_RETURN(d.users, DecodeArray<User>(users, "user list", DecodeUser));
    }
    ARCHIL_ASSIGN_OR_RETURN(d.branch_name, OptionalString(j, "branchName"));
    ARCHIL_ASSIGN_OR_RETURN(d.root_id, OptionalString(j, "rootId"));
    ARCHIL_ASSIGN_OR_RETURN(d.parent_id, OptionalString(j, "parentId"));
    return d;
  }());
}

Result<std::vector<Disk>> DecodeDiskList(const json& j) {
  return DecodeArray<Disk>(j, "disk list", DecodeDisk);
}

Result<CreateDiskReply> DecodeCreateDiskReply(const json& j) {
  return FromServer("created disk", [&]() -> Result<CreateDiskReply> {
    ARCHIL_RETURN_IF_ERROR(RequireObject(j, "a created disk"));
    CreateDiskReply out;
    ARCHIL_ASSIGN_OR_RETURN(out.disk_id, RequiredString(j, "diskId"));
    ARCHIL_ASSIGN_OR_RETURN(out.created, RequiredBool(j, "created"));
    if (const json& users = Member(j, "authorizedUsers"); !users.is_null()) {
      ARCHIL_ASSIGN_OR_RETURN(out.users, DecodeArray<User>(users, "user list", DecodeUser));
    }
    if (const json& disk = Member(j, "disk"); !disk.is_null()) {
      ARCHIL_ASSIGN_OR_RETURN(out.disk, DecodeDisk(disk));
    }
    return out;
  }());
}

Result<ApiKey> DecodeApiKey(const json& j) {
  return FromServer("API key", [&]() -> Result<ApiKey> {
    ARCHIL_RETURN_IF_ERROR(RequireObject(j, "an API key"));
    ApiKey k;
    ARCHIL_ASSIGN_OR_RETURN(k.id, RequiredString(j, "id"));
    ARCHIL_ASSIGN_OR_RETURN(k.name, StringOr(j, "name", ""));
    ARCHIL_ASSIGN_OR_RETURN(k.description, StringOr(j, "description", ""));
    ARCHIL_ASSIGN_OR_RETURN(k.token_suffix, StringOr(j, "tokenSuffix", ""));
    ARCHIL_ASSIGN_OR_RETURN(k.created_at, StringOr(j, "createdAt", ""));
    ARCHIL_ASSIGN_OR_RETURN(k.token, OptionalString(j, "token"));
    return k;
  }());
}

Result<std::vector<ApiKey>> DecodeKeyList(const json& j) {
  ARCHIL_RETURN_IF_ERROR(FromServer("key list", RequireObject(j, "a key list")));
  return DecodeArray<ApiKey>(Member(j, "tokens"), "key list's tokens", DecodeApiKey);
}

std::string EncodeOk(const json& data, const std::string* next_cursor) {
  json body = {{"success", true}, {"data", data}};
  if (next_cursor) body["nextCursor"] = next_cursor->empty() ? json(nullptr) : json(*next_cursor);
  return DumpJson(body);
}

std::string EncodeError(std::string_view code, std::string_view message) {
  json body = {{"success", false}, {"error", message}, {"code", code}};
  return DumpJson(body);
}

Result<Envelope> DecodeEnvelope(std::string_view body) {
  // The same bounded parser as for requests: a hostile server cannot overflow our stack.
  Result<json> parsed = ParseJsonObject(body);
  if (!parsed.ok()) {
    return Status::Corruption("the server's answer is not an API response: " +
                              parsed.status().message());
  }
  const json& j = *parsed;
  return FromServer("response", [&]() -> Result<Envelope> {
    Envelope e;
    ARCHIL_ASSIGN_OR_RETURN(e.success, RequiredBool(j, "success"));
    if (e.success) {
      e.data = Member(j, "data");
      ARCHIL_ASSIGN_OR_RETURN(e.next_cursor, OptionalString(j, "nextCursor"));
    } else {
      ARCHIL_ASSIGN_OR_RETURN(e.error, RequiredString(j, "error"));
      ARCHIL_ASSIGN_OR_RETURN(e.code, StringOr(j, "code", ""));
    }
    return e;
  }());
}

Result<Checkpoint> DecodeCheckpoint(const json& j) {
  return FromServer("checkpoint", [&]() -> Result<Checkpoint> {
    ARCHIL_RETURN_IF_ERROR(RequireObject(j, "a checkpoint"));
    Checkpoint c;
    ARCHIL_ASSIGN_OR_RETURN(c.name, RequiredString(j, "checkpoint_name"));
    ARCHIL_ASSIGN_OR_RETURN(c.status, RequiredString(j, "status"));
    ARCHIL_ASSIGN_OR_RETURN(c.created_at, StringOr(j, "created_at", ""));
    return c;
  }());
}

Result<std::vector<Checkpoint>> DecodeCheckpointList(const json& j) {
  return DecodeArray<Checkpoint>(j, "checkpoint list", DecodeCheckpoint);
}

Result<AllowedIps> DecodeAllowedIps(const json& j) {
  return FromServer("allowed addresses", [&]() -> Result<AllowedIps> {
    ARCHIL_RETURN_IF_ERROR(RequireObject(j, "the allowed addresses"));
    AllowedIps a;
    ARCHIL_ASSIGN_OR_RETURN(a.allowed_ips, RequiredStringArray(j, "allowedIps"));
    return a;
  }());
}

Result<Branch> DecodeBranch(const json& j) {
  return FromServer("branch", [&]() -> Result<Branch> {
    ARCHIL_RETURN_IF_ERROR(RequireObject(j, "a branch"));
    Branch b;
    ARCHIL_ASSIGN_OR_RETURN(b.name, RequiredString(j, "branch_name"));
    ARCHIL_ASSIGN_OR_RETURN(b.filesystem_id, RequiredString(j, "filesystem_id"));
    ARCHIL_ASSIGN_OR_RETURN(b.parent_id, StringOr(j, "parent_id", ""));
    ARCHIL_ASSIGN_OR_RETURN(b.from_checkpoint, StringOr(j, "from_checkpoint_name", ""));
    ARCHIL_ASSIGN_OR_RETURN(b.status, StringOr(j, "status", ""));
    ARCHIL_ASSIGN_OR_RETURN(b.created_at, StringOr(j, "created_at", ""));
    return b;
  }());
}

Result<std::vector<Branch>> DecodeBranchList(const json& j) {
  return DecodeArray<Branch>(j, "branch list", DecodeBranch);
}

}  // namespace archil::wire
