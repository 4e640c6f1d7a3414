// Where a region's services are, and how the CLI finds them.
//
// Resolution order (docs/cli.md):
//   1. an explicit endpoint (`--endpoint URL` or ARCHIL_ENDPOINT);
//   2. the regions file (ARCHIL_REGIONS_FILE, default /etc/archil/regions.json):
//        {"regions": {"<region>": {"api": "https://host:port", "mount": "host:port"}}}
//   3. servers running on this machine, which advertise themselves as
//        <run dir>/<region>.json = {"region": ..., "api": ..., "pid": ...}
//      (run dir: ARCHIL_RUN_DIR, default /run/archil). Stale files (dead pid) are ignored, and so
//      are files that someone other than root or the caller owns or may write.
// With no region given, a single live local server is used; several are an error naming them.
//
// Thread-safety: free functions over the file system; no shared state.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "base/status.h"

namespace archil {

struct Endpoints {
  std::string region;
  std::string api_url;  // "http://127.0.0.1:8420" or "https://..."; never a trailing slash
  // The disk server's "host:port" (TLS unless it is on this machine, docs/protocol.md §2);
  // empty until one listens.
  std::string mount_addr;
  // A local server's admin key file (advertised so that root on the same machine needs no
  // configuration); empty otherwise.
  std::string admin_key_file;
};

struct ResolveOptions {
  std::optional<std::string> endpoint;  // flag or ARCHIL_ENDPOINT
  std::optional<std::string> region;    // flag or ARCHIL_REGION
  std::string regions_file;             // ARCHIL_REGIONS_FILE or the default
  bool regions_file_explicit = false;   // true when set by the user: a missing file is an error
  std::string run_dir;                  // ARCHIL_RUN_DIR or the default
};

inline constexpr char kDefaultRegionsFile[] = "/etc/archil/regions.json";
inline constexpr char kDefaultRunDir[] = "/run/archil";

// Fills ResolveOptions from the environment; flags given on the command line override it.
ResolveOptions ResolveOptionsFromEnv();

Result<Endpoints> ResolveEndpoints(const ResolveOptions& options);

// The first line of a local server's admin key file, read only if the file is private to the
// caller: a regular file (not a symlink), owned by the caller or root, with no group or other
// permissions. Anything else is PermissionDenied, naming what is wrong: an advertisement in a
// directory others can write must not make the CLI send someone else's file as a credential.
Result<std::string> ReadAdminKeyFile(const std::string& path);

// The whole file (at most 64 KiB), if it is a regular file (not a symlink) owned by the caller or
// root that others cannot write, or with `private_only`, cannot read either; checked on the open
// file itself. PermissionDenied names what is wrong (EACCES too: a file the caller may not read).
Result<std::string> ReadTrustedFile(const std::string& path, bool private_only);

// Region names: 1 to 64 of [a-z0-9-], starting with a letter or digit.
Status ValidateRegionName(const std::string& region);

// Where a server advertises itself (<run_dir>/<region>.json), and what it writes there; the
// server writes it atomically (control/advertisement.h).
std::string AdvertisementPath(const std::string& run_dir, const std::string& region);
std::string AdvertisementJson(const Endpoints& endpoints, pid_t pid);
// The pid of a live process whose advertisement of `region` is in `run_dir` (and trusted, as the
// resolver reads it), or nullopt.
std::optional<pid_t> LiveAdvertiser(const std::string& run_dir, const std::string& region);
// Removes the advertisement if it is still this process's.
void RemoveAdvertisement(const std::string& run_dir, const std::string& region, pid_t pid);

}  // namespace archil
