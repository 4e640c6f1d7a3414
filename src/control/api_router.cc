#include "control/api_router.h"

#include <algorithm>
#include <chrono>
#include <vector>

#include "api/grep_wire.h"
#include "api/share_wire.h"
#include "api/wire.h"
#include "base/clock.h"
#include "base/log.h"
#include "base/status.h"
#include "base/strings.h"
#include "control/byte_range.h"

namespace archil {
namespace {

using nlohmann::json;

ApiResponse Ok(int status, const json& data, const std::string* next_cursor = nullptr) {
  ApiResponse r;
  r.status = status;
  r.body = wire::EncodeOk(data, next_cursor);
  return r;
}

wire::User ToWire(const DiskUser& u, const std::string& token = "") {
  wire::User w{u.type, u.nickname, u.token_suffix, u.identifier, FormatRfc3339(u.created_at), {}};
  if (!token.empty()) w.token = token;
  return w;
}

wire::Disk ToWire(const Disk& d) {
  wire::Disk w;
  w.id = d.id.str();
  w.name = d.name;
  w.status = d.state == DiskState::kAvailable ? "available" : "deleting";
  w.region = d.region;
  w.created_at = FormatRfc3339(d.created_at);
  w.root = {d.root.uid, d.root.gid, d.root.mode};
  for (const DiskUser& u : d.users) w.users.push_back(ToWire(u));
  if (d.branch) {
    w.branch_name = d.branch->name;
    w.root_id = d.branch->root.str();
    w.parent_id = d.branch->parent.str();
  }
  return w;
}

wire::Checkpoint ToWire(const CheckpointView& c) {
  return {c.name, c.committed ? "committed" : "pending", FormatRfc3339(c.created_at)};
}

wire::Branch ToWire(const BranchView& b) {
  return {b.name,
          b.disk.str(),
          b.parent.str(),
          b.from_checkpoint,
          b.hidden ? "hidden" : "available",
          FormatRfc3339(b.created_at)};
}

wire::ApiKey ToWire(const ApiKey& k, const std::string& token = "") {
  wire::ApiKey w{k.id, k.name, k.description, k.token_suffix, FormatRfc3339(k.created_at), {}};
  if (!token.empty()) w.token = token;
  return w;
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

class Dispatch {
 public:
  Dispatch(ControlService* service, const ApiRequest& r,
           const std::vector<std::pair<std::string, ApiRouter::HealthPart>>& health,
           const std::vector<std::pair<std::string, ApiRouter::DiskPart>>& disk_parts,
           const std::string& mount_address)
      : s_(service),
        r_(r),
        health_(health),
        disk_parts_(disk_parts),
        mount_address_(mount_address) {}

  ApiResponse Run() {
    std::vector<std::string_view> parts = Split(r_.path, '/');
    // "/api/disks/x" -> ["", "api", "disks", "x"]; tolerate one trailing slash.
    if (parts.size() > 2 && parts.back().empty()) parts.pop_back();
    if (parts.size() < 3 || !parts[0].empty() || parts[1] != "api") return NoRoute();
    std::vector<std::string_view> p(parts.begin() + 2, parts.end());
    const std::string& m = r_.method;

    if (p.size() == 1 && p[0] == "health") {
      if (m != "GET") return NoMethod("GET");
      if (Status h = s_->Health(); !h.ok()) return ErrorResponse(h);  // 503: stalled
      json body = {{"status", "ok"}, {"region", s_->region()}};
      for (const auto& [name, part] : health_) {
        json detail = json::object();
        if (Status h = part(&detail); !h.ok()) return ErrorResponse(h);
        body[name] = std::move(detail);
      }
      return Ok(200, body);
    }
    // Where this region's disk server listens: what a client that knows only the API's address
    // mounts from. Public, as the API's own address is.
    if (p.size() == 1 && p[0] == "region") {
      if (m != "GET") return NoMethod("GET");
      json body = {{"region", s_->region()}};
      if (!mount_address_.empty()) body["mount"] = mount_address_;
      return Ok(200, body);
    }
    // A share link: the token in the URL is the credential (docs/api.md "Share links").
    if (p.size() == 2 && p[0] == "share") {
      if (m != "GET" && m != "HEAD") return NoMethod("GET, HEAD");
      return ServeShare(p[1]);
    }
    // Making one: an API key, or a disk token of that disk (a mount's credential).
    if (p.size() == 3 && p[0] == "disks" && p[2] == "share") {
      Result<ShareCredential> by = s_->AuthenticateShare(r_.authorization, p[1], r_.peer);
      if (!by.ok()) return ErrorResponse(by.status());
      return m == "POST" ? CreateShare(*by, p[1]) : NoMethod("POST");
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
      if (p[2] == "checkpoints") {
        if (p.size() == 3) return m == "GET" ? ListCheckpoints(p[1]) : NoMethod("GET");
        if (p.size() == 4) return m == "DELETE" ? DeleteCheckpoint(p[1], p[3]) : NoMethod("DELETE");
      }
      if (p[2] == "branches") {
        if (p.size() == 3)
          return m == "GET"    ? ListBranches(p[1])
                 : m == "POST" ? CreateBranch(p[1])
                               : NoMethod("GET, POST");
        if (p.size() == 4)
          return m == "GET"      ? GetBranch(p[1], p[3])
                 : m == "DELETE" ? DeleteBranch(p[1], p[3])
                                 : NoMethod("GET, DELETE");
      }
      if (p[2] == "grep" && p.size() == 3) return m == "POST" ? Grep(p[1]) : NoMethod("POST");
      if (p[2] == "allowed-ips" && p.size() == 3) {
        return m == "GET"   ? GetAllowedIps(p[1])
               : m == "PUT" ? PutAllowedIps(p[1])
                            : NoMethod("GET, PUT");
      }
      if (p[2] == "users") {
        if (p.size() == 3)
          return m == "GET" ? ListUsers(p[1]) : m == "POST" ? AddUser(p[1]) : NoMethod("GET, POST");
        if (p.size() == 4) return m == "DELETE" ? RemoveUser(p[1], p[3]) : NoMethod("DELETE");
      }
      return NoRoute();
    }
    if (p[0] == "share-key" && p.size() == 2 && p[1] == "rotate") {
      return m == "POST" ? RotateShareKey() : NoMethod("POST");
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
    for (const Disk& d : disks->items) items.push_back(wire::ToJson(ToWire(d)));
    return Ok(200, items, &disks->next_cursor);
  }

  ApiResponse CreateDisk() {
    Result<wire::CreateDiskRequest> req = wire::DecodeCreateDiskRequest(r_.body);
    if (!req.ok()) return ErrorResponse(req.status());
    CreateDiskRequest create{req->name, {}};
    if (req->uid) create.root.uid = *req->uid;
    if (req->gid) create.root.gid = *req->gid;
    if (req->mode) create.root.mode = *req->mode;
    Result<CreatedDisk> created = s_->CreateDisk(create);
    if (!created.ok()) return ErrorResponse(created.status());
    wire::CreateDiskReply reply{
        created->disk.id.str(), created->created, {}, ToWire(created->disk)};
    for (const DiskUser& u : created->disk.users) reply.users.push_back(ToWire(u, created->token));
    return Ok(created->created ? 201 : 200, wire::ToJson(reply));
  }

  ApiResponse GetDisk(std::string_view id) {
    Result<Disk> disk = s_->GetDisk(id);
    if (!disk.ok()) return ErrorResponse(disk.status());
    json body = wire::ToJson(ToWire(*disk));
    for (const auto& [name, part] : disk_parts_) {
      json detail;
      part(disk->id, &detail);
      if (!detail.is_null()) body[name] = std::move(detail);
    }
    return Ok(200, body);
  }

  ApiResponse DeleteDisk(std::string_view id) {
    Result<size_t> kept = s_->DeleteDisk(id);
    if (!kept.ok()) return ErrorResponse(kept.status());
    if (*kept == 0) return Ok(200, {{"diskId", id}, {"status", "deleting"}});
    // Gone for the API, but its branches read through it: it goes with the last of them.
    return Ok(200, {{"diskId", id},
                    {"status", "hidden"},
                    {"branches", *kept},
                    {"message", "the disk is deleted; its " + std::to_string(*kept) +
                                    " branches keep working, and keep its data until the last "
                                    "of them is deleted"}});
  }

  ApiResponse ListCheckpoints(std::string_view disk_id) {
    Result<std::vector<CheckpointView>> cps =
        s_->ListCheckpoints(disk_id, QueryValue(r_, "branch"));
    if (!cps.ok()) return ErrorResponse(cps.status());
    json items = json::array();
    for (const CheckpointView& c : *cps) items.push_back(wire::ToJson(ToWire(c)));
    return Ok(200, items);
  }

  ApiResponse DeleteCheckpoint(std::string_view disk_id, std::string_view name) {
    Status s = s_->DeleteCheckpoint(disk_id, QueryValue(r_, "branch"), name);
    if (!s.ok()) return ErrorResponse(s);
    return Ok(200, {{"checkpoint_name", name}, {"status", "deleted"}});
  }

  ApiResponse ListBranches(std::string_view disk_id) {
    Result<std::vector<BranchView>> branches = s_->ListBranches(disk_id);
    if (!branches.ok()) return ErrorResponse(branches.status());
    json items = json::array();
    for (const BranchView& b : *branches) items.push_back(wire::ToJson(ToWire(b)));
    return Ok(200, items);
  }

  ApiResponse Grep(std::string_view disk_id) {
    Result<wire::GrepRequest> req = wire::DecodeGrepRequest(r_.body);
    if (!req.ok()) return ErrorResponse(req.status());
    GrepQuery q;
    q.directory = req->directory;
    q.pattern = req->pattern;
    q.recursive = req->recursive;
    q.checkpoint = req->checkpoint.value_or("");
    q.max_duration_ms = static_cast<int64_t>(req->max_duration_seconds) * 1000;
    q.concurrency = static_cast<int>(req->concurrency);
    q.max_results = req->max_results;
    Result<GrepAnswer> found = s_->Grep(disk_id, QueryValue(r_, "branch"), q);
    if (!found.ok()) return ErrorResponse(found.status());
    wire::GrepReply reply;
    reply.matches.reserve(found->matches.size());
    for (GrepHit& h : found->matches) {
      reply.matches.push_back({std::move(h.file), h.line, std::move(h.text)});
    }
    reply.stopped_reason = std::move(found->stopped_reason);
    reply.files_scanned = found->files_scanned;
    reply.duration_ms = found->duration_ms;
    return Ok(200, wire::ToJson(reply));
  }

  // The host a share link's URL names: the Host the request came in on, if it is a plain
  // host[:port] (no path, user or spaces to smuggle into the URL).
  Result<std::string> LinkHost() const {
    const std::string& h = r_.host;
    if (h.empty())
      return Status::InvalidArgument("the request has no Host header to build the URL");
    for (char c : h) {
      const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '.' || c == '-' || c == ':' || c == '[' || c == ']' || c == '_';
      if (!ok || h.size() > 255) {
        return Status::InvalidArgument("the Host header is not a host[:port]");
      }
    }
    return h;
  }

  ApiResponse CreateShare(const ShareCredential& by, std::string_view disk_id) {
    Result<wire::ShareRequest> req = wire::DecodeShareRequest(r_.body);
    if (!req.ok()) return ErrorResponse(req.status());
    Result<std::string> host = LinkHost();
    if (!host.ok()) return ErrorResponse(host.status());
    Result<ShareLink> link =
        s_->CreateShareLink(by, disk_id, QueryValue(r_, "branch"), req->key, req->expires_in);
    if (!link.ok()) return ErrorResponse(link.status());
    wire::ShareReply reply{r_.scheme + "://" + *host + "/api/share/" + link->token,
                           link->expires_in};
    return Ok(200, wire::ToJson(reply));
  }

  ApiResponse RotateShareKey() {
    Status s = s_->RotateShareKey();
    if (!s.ok()) return ErrorResponse(s);
    return Ok(200, {{"message", "share key rotated: every share link made before now fails"}});
  }

  ApiResponse ServeShare(std::string_view token) {
    Result<std::unique_ptr<FileReader>> file = s_->OpenShareLink(token);
    if (!file.ok()) return ErrorResponse(file.status());
    const uint64_t size = (*file)->size();
    const ByteRange range = ResolveByteRange(r_.range, size);
    if (range.kind == ByteRange::Kind::kUnsatisfiable) {
      ApiResponse res = ErrorResponse(
          416, "range_not_satisfiable",
          "the range '" + r_.range + "' is outside the file's " + std::to_string(size) + " bytes");
      res.headers.emplace_back("Content-Range", "bytes */" + std::to_string(size));
      return res;
    }
    ApiResponse res;
    res.content_type = "application/octet-stream";
    res.headers.emplace_back("Accept-Ranges", "bytes");
    res.headers.emplace_back("Cache-Control", "private, no-store");
    if (range.kind == ByteRange::Kind::kPartial) {
      res.status = 206;
      res.headers.emplace_back("Content-Range",
                               "bytes " + std::to_string(range.offset) + "-" +
                                   std::to_string(range.offset + range.length - 1) + "/" +
                                   std::to_string(size));
    }
    res.content_length = range.length;
    res.stream = FileRangeStream(std::move(*file), range.offset, range.length);
    return res;
  }

  ApiResponse CreateBranch(std::string_view disk_id) {
    Result<wire::CreateBranchRequest> req = wire::DecodeCreateBranchRequest(r_.body);
    if (!req.ok()) return ErrorResponse(req.status());
    CreateBranchRequest create{std::string(disk_id), req->branch_name, req->from_checkpoint,
                               req->from_branch.value_or(""), r_.idempotency_key};
    Result<BranchResult> made = s_->CreateBranch(create);
    if (!made.ok()) return ErrorResponse(made.status());
    return Ok(made->created ? 201 : 200, wire::ToJson(ToWire(made->branch)));
  }

  ApiResponse GetBranch(std::string_view disk_id, std::string_view name) {
    Result<BranchView> b = s_->GetBranch(disk_id, name);
    return b.ok() ? Ok(200, wire::ToJson(ToWire(*b))) : ErrorResponse(b.status());
  }

  ApiResponse DeleteBranch(std::string_view disk_id, std::string_view name) {
    Status s = s_->DeleteBranch(disk_id, name);
    if (!s.ok()) return ErrorResponse(s);
    return Ok(200, {{"branch_name", name}, {"status", "deleted"}});
  }

  ApiResponse ListUsers(std::string_view disk_id) {
    Result<std::vector<DiskUser>> listed = s_->ListDiskUsers(disk_id);
    if (!listed.ok()) return ErrorResponse(listed.status());
    json users = json::array();
    for (const DiskUser& u : *listed) users.push_back(wire::ToJson(ToWire(u)));
    return Ok(200, users);
  }

  ApiResponse AddUser(std::string_view disk_id) {
    Result<wire::AddUserRequest> req = wire::DecodeAddUserRequest(r_.body);
    if (!req.ok()) return ErrorResponse(req.status());
    Result<CreatedUser> user = s_->AddDiskUser(disk_id, req->nickname);
    if (!user.ok()) return ErrorResponse(user.status());
    return Ok(201, wire::ToJson(ToWire(user->user, user->token)));
  }

  ApiResponse RemoveUser(std::string_view disk_id, std::string_view last) {
    // Both DELETE /users/{identifier} and Archil's /users/token?identifier=X.
    std::string identifier(last);
    if (last == "token" && r_.query.count("identifier")) identifier = QueryValue(r_, "identifier");
    Status s = s_->RemoveDiskUser(disk_id, identifier);
    if (!s.ok()) return ErrorResponse(s);
    return Ok(200, {{"message", "user removed"}, {"identifier", identifier}});
  }

  static json AllowedIpsJson(const std::vector<IpRange>& allowed) {
    wire::AllowedIps w;
    for (const IpRange& r : allowed) w.allowed_ips.push_back(r.ToString());
    return wire::ToJson(w);
  }

  ApiResponse GetAllowedIps(std::string_view disk_id) {
    Result<std::vector<IpRange>> allowed = s_->GetAllowedIps(disk_id);
    if (!allowed.ok()) return ErrorResponse(allowed.status());
    return Ok(200, AllowedIpsJson(*allowed));
  }

  ApiResponse PutAllowedIps(std::string_view disk_id) {
    Result<wire::AllowedIps> req = wire::DecodeAllowedIpsRequest(r_.body);
    if (!req.ok()) return ErrorResponse(req.status());
    Result<std::vector<IpRange>> allowed = s_->SetAllowedIps(disk_id, req->allowed_ips);
    if (!allowed.ok()) return ErrorResponse(allowed.status());
    return Ok(200, AllowedIpsJson(*allowed));
  }

  ApiResponse ListKeys() {
    Result<PageRequest> page = PageFromQuery(r_);
    if (!page.ok()) return ErrorResponse(page.status());
    Result<Page<ApiKey>> keys = s_->ListApiKeys(*page);
    if (!keys.ok()) return ErrorResponse(keys.status());
    json items = json::array();
    for (const ApiKey& k : keys->items) items.push_back(wire::ToJson(ToWire(k)));
    return Ok(200, {{"tokens", std::move(items)}}, &keys->next_cursor);
  }

  ApiResponse CreateKey() {
    Result<wire::CreateKeyRequest> req = wire::DecodeCreateKeyRequest(r_.body);
    if (!req.ok()) return ErrorResponse(req.status());
    Result<CreatedApiKey> key = s_->CreateApiKey(req->name, req->description);
    if (!key.ok()) return ErrorResponse(key.status());
    return Ok(201, wire::ToJson(ToWire(key->key, key->token)));
  }

  ApiResponse DeleteKey(std::string_view id) {
    Status s = s_->DeleteApiKey(id);
    if (!s.ok()) return ErrorResponse(s);
    return Ok(200, {{"message", "API key deleted"}, {"id", id}});
  }

  ControlService* s_;
  const ApiRequest& r_;
  const std::vector<std::pair<std::string, ApiRouter::HealthPart>>& health_;
  const std::vector<std::pair<std::string, ApiRouter::DiskPart>>& disk_parts_;
  const std::string& mount_address_;
};

}  // namespace

ApiResponse ErrorResponse(int http_status, std::string_view code, std::string_view message) {
  ApiResponse r;
  r.status = http_status;
  r.body = wire::EncodeError(code, message);
  return r;
}

ApiResponse ErrorResponse(const Status& status) {
  return ErrorResponse(HttpStatusFor(status.code()), CodeName(status.code()), status.message());
}

std::string RouteLabel(std::string_view path) {
  static constexpr std::string_view kWords[] = {
      "api",      "disks",  "tokens", "users", "allowed-ips", "checkpoints",
      "branches", "health", "region", "share", "share-key",   "rotate"};
  static constexpr std::string_view kCollections[] = {"disks",       "tokens",   "users",
                                                      "checkpoints", "branches", "share"};
  std::vector<std::string_view> parts = Split(path, '/');
  if (parts.size() > 2 && parts.back().empty()) parts.pop_back();
  if (parts.size() < 3 || !parts[0].empty() || parts[1] != "api" || parts.size() > 6) {
    return "other";
  }
  std::string route;
  for (size_t i = 1; i < parts.size(); ++i) {
    const bool variable = std::find(std::begin(kCollections), std::end(kCollections),
                                    parts[i - 1]) != std::end(kCollections);
    if (variable) {
      route += "/{id}";
    } else if (std::find(std::begin(kWords), std::end(kWords), parts[i]) != std::end(kWords)) {
      route += "/" + std::string(parts[i]);
    } else {
      return "other";
    }
  }
  return route;
}

std::string LoggablePath(std::string_view path) {
  static constexpr std::string_view kShare = "/api/share/";
  if (path.starts_with(kShare)) return std::string(kShare) + "{token}";
  return std::string(path);
}

bool ApiRouter::AnswersInline(const ApiRequest& request) {
  if (request.method != "GET" && request.method != "HEAD") return false;
  // Only what waits on nothing: health, the region, and the lists that read the catalog's reader
  // connection alone (a WAL reader never waits for a commit). A disk's own routes also read the
  // engine's lineage and the tier, and other catalog reads share the writer's connection: they
  // can wait behind a commit's fsync, which must not happen on an I/O thread.
  const std::string route = RouteLabel(request.path);
  return route == "/api/health" || route == "/api/region" || route == "/api/disks" ||
         route == "/api/tokens";
}

void ApiRouter::SetMetrics(metrics::Registry* registry) {
  requests_ = registry->AddCounter("archil_api_requests_total",
                                   "Control-plane API requests answered, by method, route and "
                                   "HTTP status.",
                                   {"method", "route", "code"});
  seconds_ = registry->AddHistogram("archil_api_request_seconds",
                                    "Control-plane API requests: seconds in the router (the "
                                    "catalog's commit included), by route.",
                                    {"route"}, metrics::DefaultLatencyBounds());
}

ApiResponse ApiRouter::Handle(const ApiRequest& request) const {
  const auto start = std::chrono::steady_clock::now();
  ApiResponse response =
      Dispatch(service_, request, health_parts_, disk_parts_, mount_address_).Run();
  if (requests_ != nullptr) {
    const std::string route = RouteLabel(request.path);
    const std::string method = request.method == "GET" || request.method == "POST" ||
                                       request.method == "DELETE" || request.method == "PUT" ||
                                       request.method == "HEAD"
                                   ? request.method
                                   : "other";
    requests_->With({method, route, std::to_string(response.status)})->Add();
    seconds_->With({route})->Observe(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  if (response.status >= 500) {
    // The server's own failures are logged at the default level, with what the client was told.
    ARCHIL_LOG(kWarn) << request.method << " " << LoggablePath(request.path) << " -> "
                      << response.status << " " << response.body;
  }
  return response;
}

}  // namespace archil
