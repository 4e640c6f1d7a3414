#include "api/endpoints.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
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

// Owned by root or the caller, and not writable by anyone else (or, with `private_only`, not
// readable either): whether what a file says can be trusted as this machine's and this user's.
Status CheckTrusted(const struct stat& st, const std::string& path, bool private_only) {
  if (!S_ISREG(st.st_mode)) return Status::PermissionDenied(path + " is not a regular file");
  if (st.st_uid != 0 && st.st_uid != geteuid()) {
    return Status::PermissionDenied(path + " belongs to uid " + std::to_string(st.st_uid) +
                                    ", neither root nor you");
  }
  const mode_t others = private_only ? (S_IRWXG | S_IRWXO) : (S_IWGRP | S_IWOTH);
  if ((st.st_mode & others) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof(mode), "%04o", static_cast<unsigned>(st.st_mode & 07777));
    return Status::PermissionDenied(
        path + " has mode " + mode +
        (private_only ? ": others may read it" : ": others may write it"));
  }
  return Status::Ok();
}

}  // namespace

Result<std::string> ReadTrustedFile(const std::string& path, bool private_only) {
  int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return Status::FromErrno(errno, "open " + path);
  struct stat st;
  Status s = fstat(fd, &st) == 0 ? CheckTrusted(st, path, private_only)
                                 : Status::FromErrno(errno, "stat " + path);
  std::string text;
  while (s.ok() && text.size() < (64u << 10)) {
    char buf[4096];
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) s = Status::FromErrno(errno, "read " + path);
    if (n <= 0) break;
    text.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  if (!s.ok()) return s;
  return text;
}

namespace {

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

// Whether `p` is a process that has not exited (a zombie has: its server is gone).
bool Alive(pid_t p) {
  if (p <= 0 || (kill(p, 0) != 0 && errno == ESRCH)) return false;
  std::ifstream stat("/proc/" + std::to_string(p) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return true;  // no /proc: trust kill(2)
  const size_t paren = line.rfind(')');
  return paren == std::string::npos || paren + 2 >= line.size() || line[paren + 2] != 'Z';
}

struct Advertisement {
  Endpoints endpoints;
  pid_t pid = 0;
};

// A live server's advertisement, or nullopt for stale, untrusted or unreadable files.
std::optional<Advertisement> ReadAdvertisementFile(const std::string& path) {
  Result<std::string> text = ReadTrustedFile(path, /*private_only=*/false);
  if (!text.ok()) return std::nullopt;
  json parsed = json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded() || !parsed.is_object()) return std::nullopt;
  Result<json> j = std::move(parsed);
  auto pid = j->find("pid");
  if (pid == j->end() || !pid->is_number_integer()) return std::nullopt;
  const int64_t raw = pid->get<int64_t>();
  if (raw <= 0 || raw > INT32_MAX || !Alive(static_cast<pid_t>(raw))) return std::nullopt;
  Endpoints e{StringField(*j, "region"), TrimSlash(StringField(*j, "api")),
              StringField(*j, "mount"), StringField(*j, "adminKeyFile")};
  if (e.region.empty() || !ValidateApiUrl(e.api_url, path).ok()) return std::nullopt;
  return Advertisement{std::move(e), static_cast<pid_t>(raw)};
}

std::optional<Endpoints> ReadAdvertisement(const std::string& path) {
  std::optional<Advertisement> a = ReadAdvertisementFile(path);
  if (!a) return std::nullopt;
  return std::move(a->endpoints);
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

std::optional<pid_t> LiveAdvertiser(const std::string& run_dir, const std::string& region) {
  std::optional<Advertisement> a = ReadAdvertisementFile(AdvertisementPath(run_dir, region));
  if (!a || a->endpoints.region != region) return std::nullopt;
  return a->pid;
}

Result<std::string> ReadAdminKeyFile(const std::string& path) {
  ARCHIL_ASSIGN_OR_RETURN(std::string text, ReadTrustedFile(path, /*private_only=*/true));
  std::string key = text.substr(0, text.find('\n'));
  if (key.empty()) return Status::InvalidArgument(path + " holds no key");
  return key;
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
