#include "api/wire.h"

#include "api/json_body.h"

namespace archil::wire {
namespace {

using nlohmann::json;

// Reply-side field readers: a missing or mistyped field is Corruption naming it.
class Reader {
 public:
  Reader(const json& j, const char* what) : j_(j), what_(what) {}

  Status Check() const {
    if (!j_.is_object()) return Bad("is not an object");
    return Status::Ok();
  }
  Status Str(const char* field, std::string* out, bool required = true) const {
    auto it = j_.find(field);
    if (it == j_.end() || it->is_null()) {
      return required ? Bad(std::string("has no ") + field) : Status::Ok();
    }
    if (!it->is_string()) return Bad(std::string(field) + " is not a string");
    *out = it->get<std::string>();
    return Status::Ok();
  }
  Status OptStr(const char* field, std::optional<std::string>* out) const {
    auto it = j_.find(field);
    if (it == j_.end() || it->is_null()) return Status::Ok();
    if (!it->is_string()) return Bad(std::string(field) + " is not a string");
    *out = it->get<std::string>();
    return Status::Ok();
  }
  Status U32(const char* field, uint32_t* out) const {
    auto it = j_.find(field);
    if (it == j_.end() || !it->is_number_unsigned() || it->get<uint64_t>() > UINT32_MAX) {
      return Bad(std::string(field) + " is not a 32-bit unsigned integer");
    }
    *out = static_cast<uint32_t>(it->get<uint64_t>());
    return Status::Ok();
  }
  Status Bool(const char* field, bool* out) const {
    auto it = j_.find(field);
    if (it == j_.end() || !it->is_boolean()) return Bad(std::string(field) + " is not a boolean");
    *out = it->get<bool>();
    return Status::Ok();
  }
  // The member `field`, or null when absent.
  const json& Member(const char* field) const {
    static const json kNull;
    auto it = j_.find(field);
    return it == j_.end() ? kNull : *it;
  }

 private:
  Status Bad(const std::string& what) const {
    return Status::Corruption(std::string("server sent a ") + what_ + " that " + what);
  }
  const json& j_;
  const char* what_;
};

template <typename T, typename Fn>
Result<std::vector<T>> DecodeArray(const json& j, const char* what, Fn decode) {
  if (!j.is_array())
    return Status::Corruption(std::string("server sent a ") + what + " that is not a list");
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
  Reader r(j, "disk user");
  ARCHIL_RETURN_IF_ERROR(r.Check());
  User u;
  ARCHIL_RETURN_IF_ERROR(r.Str("identifier", &u.identifier));
  ARCHIL_RETURN_IF_ERROR(r.Str("type", &u.type, false));
  ARCHIL_RETURN_IF_ERROR(r.Str("nickname", &u.nickname, false));
  ARCHIL_RETURN_IF_ERROR(r.Str("tokenSuffix", &u.token_suffix, false));
  ARCHIL_RETURN_IF_ERROR(r.Str("createdAt", &u.created_at, false));
  ARCHIL_RETURN_IF_ERROR(r.OptStr("token", &u.token));
  return u;
}

Result<Disk> DecodeDisk(const json& j) {
  Reader r(j, "disk");
  ARCHIL_RETURN_IF_ERROR(r.Check());
  Disk d;
  ARCHIL_RETURN_IF_ERROR(r.Str("id", &d.id));
  ARCHIL_RETURN_IF_ERROR(r.Str("name", &d.name));
  ARCHIL_RETURN_IF_ERROR(r.Str("organization", &d.organization, false));
  ARCHIL_RETURN_IF_ERROR(r.Str("status", &d.status, false));
  ARCHIL_RETURN_IF_ERROR(r.Str("provider", &d.provider, false));
  ARCHIL_RETURN_IF_ERROR(r.Str("region", &d.region, false));
  ARCHIL_RETURN_IF_ERROR(r.Str("createdAt", &d.created_at, false));
  const json& attrs = r.Member("rootAttrs");
  if (!attrs.is_null()) {
    Reader a(attrs, "disk's rootAttrs");
    ARCHIL_RETURN_IF_ERROR(a.Check());
    ARCHIL_RETURN_IF_ERROR(a.U32("uid", &d.root.uid));
    ARCHIL_RETURN_IF_ERROR(a.U32("gid", &d.root.gid));
    ARCHIL_RETURN_IF_ERROR(a.U32("mode", &d.root.mode));
  }
  const json& users = r.Member("authorizedUsers");
  if (!users.is_null()) {
    ARCHIL_ASSIGN_OR_RETURN(d.users, DecodeArray<User>(users, "user list", DecodeUser));
  }
  ARCHIL_RETURN_IF_ERROR(r.OptStr("branchName", &d.branch_name));
  ARCHIL_RETURN_IF_ERROR(r.OptStr("rootId", &d.root_id));
  ARCHIL_RETURN_IF_ERROR(r.OptStr("parentId", &d.parent_id));
  return d;
}

Result<std::vector<Disk>> DecodeDiskList(const json& j) {
  return DecodeArray<Disk>(j, "disk list", DecodeDisk);
}

Result<CreateDiskReply> DecodeCreateDiskReply(const json& j) {
  Reader r(j, "created disk");
  ARCHIL_RETURN_IF_ERROR(r.Check());
  CreateDiskReply out;
  ARCHIL_RETURN_IF_ERROR(r.Str("diskId", &out.disk_id));
  ARCHIL_RETURN_IF_ERROR(r.Bool("created", &out.created));
  const json& users = r.Member("authorizedUsers");
  if (!users.is_null()) {
    ARCHIL_ASSIGN_OR_RETURN(out.users, DecodeArray<User>(users, "user list", DecodeUser));
  }
  const json& disk = r.Member("disk");
  if (!disk.is_null()) {
    ARCHIL_ASSIGN_OR_RETURN(out.disk, DecodeDisk(disk));
  }
  return out;
}

Result<ApiKey> DecodeApiKey(const json& j) {
  Reader r(j, "API key");
  ARCHIL_RETURN_IF_ERROR(r.Check());
  ApiKey k;
  ARCHIL_RETURN_IF_ERROR(r.Str("id", &k.id));
  ARCHIL_RETURN_IF_ERROR(r.Str("name", &k.name, false));
  ARCHIL_RETURN_IF_ERROR(r.Str("description", &k.description, false));
  ARCHIL_RETURN_IF_ERROR(r.Str("tokenSuffix", &k.token_suffix, false));
  ARCHIL_RETURN_IF_ERROR(r.Str("createdAt", &k.created_at, false));
  ARCHIL_RETURN_IF_ERROR(r.OptStr("token", &k.token));
  return k;
}

Result<std::vector<ApiKey>> DecodeKeyList(const json& j) {
  Reader r(j, "key list");
  ARCHIL_RETURN_IF_ERROR(r.Check());
  return DecodeArray<ApiKey>(r.Member("tokens"), "key list's tokens", DecodeApiKey);
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
  Reader r(j, "response");
  Envelope e;
  ARCHIL_RETURN_IF_ERROR(r.Bool("success", &e.success));
  if (e.success) {
    e.data = r.Member("data");
    ARCHIL_RETURN_IF_ERROR(r.OptStr("nextCursor", &e.next_cursor));
  } else {
    ARCHIL_RETURN_IF_ERROR(r.Str("error", &e.error));
    ARCHIL_RETURN_IF_ERROR(r.Str("code", &e.code, false));
  }
  return e;
}

Result<Checkpoint> DecodeCheckpoint(const json& j) {
  Reader r(j, "checkpoint");
  ARCHIL_RETURN_IF_ERROR(r.Check());
  Checkpoint c;
  ARCHIL_RETURN_IF_ERROR(r.Str("checkpoint_name", &c.name));
  ARCHIL_RETURN_IF_ERROR(r.Str("status", &c.status));
  ARCHIL_RETURN_IF_ERROR(r.Str("created_at", &c.created_at, false));
  return c;
}

Result<std::vector<Checkpoint>> DecodeCheckpointList(const json& j) {
  return DecodeArray<Checkpoint>(j, "checkpoint list", DecodeCheckpoint);
}

Result<Branch> DecodeBranch(const json& j) {
  Reader r(j, "branch");
  ARCHIL_RETURN_IF_ERROR(r.Check());
  Branch b;
  ARCHIL_RETURN_IF_ERROR(r.Str("branch_name", &b.name));
  ARCHIL_RETURN_IF_ERROR(r.Str("filesystem_id", &b.filesystem_id));
  ARCHIL_RETURN_IF_ERROR(r.Str("parent_id", &b.parent_id, false));
  ARCHIL_RETURN_IF_ERROR(r.Str("from_checkpoint_name", &b.from_checkpoint, false));
  ARCHIL_RETURN_IF_ERROR(r.Str("status", &b.status, false));
  ARCHIL_RETURN_IF_ERROR(r.Str("created_at", &b.created_at, false));
  return b;
}

Result<std::vector<Branch>> DecodeBranchList(const json& j) {
  return DecodeArray<Branch>(j, "branch list", DecodeBranch);
}

}  // namespace archil::wire
