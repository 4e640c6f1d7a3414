#include "api/endpoints.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace archil {
namespace {

using nlohmann::json;

std::optional<std::string> Env(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return std::nullopt;
  return std::string(v);
}

std::string TrimSlash(std::string url) {
  while (!url.empty() && url.back() == '/') url.pop_back();
  return url;
}

Status ValidateApiUrl(const std::string& url, const std::string& where) {
  if (url.rfind("http://", 0) == 0 || url.rfind("https://", 0) == 0) return Status::Ok();
  return Status::InvalidArgument("endpoint '" + url + "' from " + where +
                                 " must start with http:// or https://");
}

Result<json> ReadJsonFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::FromErrno(errno, "read " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  json j = json::parse(ss.str(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return Status::InvalidArgument(path + " is not a JSON object");
  }
  return j;
}

std::string StringField(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// A live server's advertisement, or nullopt for stale or unreadable files.
std::optional<Endpoints> ReadAdvertisement(const std::string& path) {
  Result<json> j = ReadJsonFile(path);
  if (!j.ok()) return std::nullopt;
  auto pid = j->find("pid");
  if (pid == j->end() || !pid->is_number_integer()) return std::nullopt;
  pid_t p = static_cast<pid_t>(pid->get<int64_t>());
  if (p <= 0 || (kill(p, 0) != 0 && errno == ESRCH)) return std::nullopt;
  Endpoints e{StringField(*j, "region"), TrimSlash(StringField(*j, "api")),
              StringField(*j, "mount"), StringField(*j, "adminKeyFile")};
  if (e.region.empty() || !ValidateApiUrl(e.api_url, path).ok()) return std::nullopt;
  return e;
}

std::vector<Endpoints> LocalServers(const std::string& run_dir) {
  std::vector<Endpoints> out;
  DIR* d = opendir(run_dir.c_str());
  if (d == nullptr) return out;
  while (dirent* ent = readdir(d)) {
    std::string name = ent->d_name;
    if (name.size() <= 5 || name.compare(name.size() - 5, 5, ".json") != 0) continue;
    if (auto e = ReadAdvertisement(run_dir + "/" + name)) out.push_back(*e);
  }
  closedir(d);
  return out;
}

Result<std::optional<Endpoints>> FromRegionsFile(const ResolveOptions& o,
                                                 const std::string& region) {
  struct stat st {};
  if (stat(o.regions_file.c_str(), &st) != 0) {
    if (o.regions_file_explicit) {
      return Status::InvalidArgument("regions file " + o.regions_file +
                                     " (ARCHIL_REGIONS_FILE) does not exist");
    }
    return std::optional<Endpoints>();
  }
  ARCHIL_ASSIGN_OR_RETURN(json j, ReadJsonFile(o.regions_file));
  auto regions = j.find("regions");
  if (regions == j.end() || !regions->is_object()) {
    return Status::InvalidArgument(o.regions_file + " has no \"regions\" object");
  }
  auto r = regions->find(region);
  if (r == regions->end()) return std::optional<Endpoints>();
  if (!r->is_object())
    return Status::InvalidArgument(o.regions_file + ": region entry is not an object");
  Endpoints e{region, TrimSlash(StringField(*r, "api")), StringField(*r, "mount"), ""};
  ARCHIL_RETURN_IF_ERROR(ValidateApiUrl(e.api_url, o.regions_file));
  return std::optional<Endpoints>(e);
}

}  // namespace

ResolveOptions ResolveOptionsFromEnv() {
  ResolveOptions o;
  o.endpoint = Env("ARCHIL_ENDPOINT");
  o.region = Env("ARCHIL_REGION");
  if (auto f = Env("ARCHIL_REGIONS_FILE")) {
    o.regions_file = *f;
    o.regions_file_explicit = true;
  } else {
    o.regions_file = kDefaultRegionsFile;
  }
  o.run_dir = Env("ARCHIL_RUN_DIR").value_or(kDefaultRunDir);
  return o;
}

Status ValidateRegionName(const std::string& region) {
  bool ok = !region.empty() && region.size() <= 64 && region[0] != '-';
  for (char c : region) ok = ok && ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-');
  if (ok) return Status::Ok();
  return Status::InvalidArgument("invalid region name '" + region +
                                 "': use 1 to 64 of a-z, 0-9 and '-'");
}

Result<Endpoints> ResolveEndpoints(const ResolveOptions& o) {
  if (o.endpoint) {
    Endpoints e{o.region.value_or(""), TrimSlash(*o.endpoint), "", ""};
    ARCHIL_RETURN_IF_ERROR(ValidateApiUrl(e.api_url, "--endpoint/ARCHIL_ENDPOINT"));
    return e;
  }
  if (o.region) {
    ARCHIL_RETURN_IF_ERROR(ValidateRegionName(*o.region));
    ARCHIL_ASSIGN_OR_RETURN(std::optional<Endpoints> listed, FromRegionsFile(o, *o.region));
    if (listed) return *listed;
    for (const Endpoints& e : LocalServers(o.run_dir)) {
      if (e.region == *o.region) return e;
    }
    return Status::NotFound("no endpoint known for region '" + *o.region +
                            "': pass --endpoint URL, set ARCHIL_ENDPOINT, list it in " +
                            o.regions_file + ", or run `archil server --region " + *o.region +
                            "` on this machine");
  }
  std::vector<Endpoints> local = LocalServers(o.run_dir);
  if (local.size() == 1) return local[0];
  if (local.empty()) {
    return Status::NotFound(
        "no region given and no archil server runs on this machine: pass --region NAME (or "
        "--endpoint URL), or start one with `archil server`");
  }
  std::string names;
  for (const Endpoints& e : local) names += (names.empty() ? "" : ", ") + e.region;
  return Status::InvalidArgument("several local servers run (" + names +
                                 "): choose one with --region NAME");
}

std::string AdvertisementPath(const std::string& run_dir, const std::string& region) {
  return run_dir + "/" + region + ".json";
}

std::string AdvertisementJson(const Endpoints& e, pid_t pid) {
  json j = {{"region", e.region}, {"api", e.api_url}, {"pid", pid}};
  if (!e.mount_addr.empty()) j["mount"] = e.mount_addr;
  if (!e.admin_key_file.empty()) j["adminKeyFile"] = e.admin_key_file;
  return j.dump(2) + "\n";
}

void RemoveAdvertisement(const std::string& run_dir, const std::string& region, pid_t pid) {
  std::string path = AdvertisementPath(run_dir, region);
  Result<json> j = ReadJsonFile(path);
  if (!j.ok()) return;
  auto p = j->find("pid");
  if (p != j->end() && p->is_number_integer() && p->get<int64_t>() == pid) unlink(path.c_str());
}

}  // namespace archil
