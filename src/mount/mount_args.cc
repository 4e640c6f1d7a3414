#include "mount/mount_args.h"

#include <cstdlib>
#include <sstream>

namespace archil::mount {
namespace {

Result<uint32_t> Number(const std::string& key, const std::string& value, uint32_t max) {
  char* end = nullptr;
  errno = 0;
  unsigned long v = std::strtoul(value.c_str(), &end, 10);
  if (value.empty() || *end != '\0' || errno != 0 || v > max || value[0] == '-') {
    return Status::InvalidArgument("mount option " + key + "=" + value +
                                   ": expected a number from 0 to " + std::to_string(max));
  }
  return static_cast<uint32_t>(v);
}

bool Ignored(const std::string& opt) {
  static const char* const kIgnored[] = {"defaults", "_netdev", "auto",  "noauto", "nofail",
                                         "user",     "nouser",  "users", "owner",  "rw",
                                         "noatime",  "nosuid",  "nodev", "exec",   "noexec"};
  for (const char* k : kIgnored) {
    if (opt == k) return true;
  }
  return opt.rfind("x-", 0) == 0 || opt.rfind("comment=", 0) == 0;
}

}  // namespace

Status SplitDiskRef(const std::string& ref, std::string* disk, std::string* subdir) {
  size_t colon = ref.find(":/");
  *disk = ref.substr(0, colon);
  *subdir = colon == std::string::npos ? "" : ref.substr(colon + 1);
  if (disk->empty()) return Status::InvalidArgument("no disk named in \"" + ref + "\"");
  if (disk->find('/') != std::string::npos || disk->find(':') != std::string::npos) {
    return Status::InvalidArgument("\"" + ref + "\" is not DISK or DISK:/SUBDIR");
  }
  std::istringstream parts(*subdir);
  std::string part;
  while (std::getline(parts, part, '/')) {
    if (part == "..") return Status::InvalidArgument("a subdirectory may not contain \"..\"");
  }
  while (subdir->size() > 1 && subdir->back() == '/') subdir->pop_back();
  if (*subdir == "/") subdir->clear();
  return Status::Ok();
}

Result<MountArgs> ParseMountHelperArgs(const std::vector<std::string>& args) {
  MountArgs m;
  std::vector<std::string> positional;
  std::string options;
  bool sloppy = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "-o") {
      if (i + 1 >= args.size()) return Status::InvalidArgument("-o needs a list of options");
      if (!options.empty()) options += ",";
      options += args[++i];
    } else if (a.rfind("-o", 0) == 0 && a.size() > 2) {
      if (!options.empty()) options += ",";
      options += a.substr(2);
    } else if (a == "-s") {
      sloppy = true;
    } else if (a == "-f") {
      m.fake = true;
    } else if (a == "-n" || a == "-v") {
      // no mtab to write; verbosity is the journal's
    } else if (a == "-t") {
      ++i;  // the type is ours by definition
    } else if (!a.empty() && a[0] == '-') {
      return Status::InvalidArgument("unknown flag " + a + " (mount.archil DISK DIR [-o OPTIONS])");
    } else {
      positional.push_back(a);
    }
  }
  if (positional.size() != 2) {
    return Status::InvalidArgument("mount.archil takes DISK[:/SUBDIR] and a mount point");
  }
  m.disk_ref = positional[0];
  m.mountpoint = positional[1];
  std::istringstream list(options);
  std::string opt;
  while (std::getline(list, opt, ',')) {
    if (opt.empty() || Ignored(opt)) continue;
    size_t eq = opt.find('=');
    std::string key = opt.substr(0, eq);
    std::string value = eq == std::string::npos ? "" : opt.substr(eq + 1);
    for (char& c : key) {
      if (c == '-') c = '_';
    }
    if (key == "ro" && eq == std::string::npos) {
      m.read_only = true;
    } else if (key == "force" && eq == std::string::npos) {
      m.force = true;
    } else if (key == "region" && !value.empty()) {
      m.region = value;
    } else if (key == "token_file" && !value.empty()) {
      m.token_file = value;
    } else if (key == "read_ahead") {
      ARCHIL_ASSIGN_OR_RETURN(m.read_ahead_kb, Number(key, value, 1 << 20));
    } else if (key == "max_cache_mb") {
      ARCHIL_ASSIGN_OR_RETURN(m.max_cache_mb, Number(key, value, 1 << 24));
    } else if (key == "timeout") {
      ARCHIL_ASSIGN_OR_RETURN(m.timeout_s, Number(key, value, kMaxTimeoutS));
    } else if (key == "metrics_listen" && !value.empty()) {
      m.metrics_listen = value;
    } else if (key == "shared" && eq == std::string::npos) {
      m.shared = true;
    } else if (key == "sync" && eq == std::string::npos) {
      m.sync = true;
    } else if (key == "writeback_ms") {
      ARCHIL_ASSIGN_OR_RETURN(m.writeback_ms, Number(key, value, kMaxWritebackMs));
      if (m.writeback_ms < kMinWritebackMs) {
        return Status::InvalidArgument("writeback_ms is at least " +
                                       std::to_string(kMinWritebackMs));
      }
    } else if (!sloppy) {
      return Status::InvalidArgument(
          "unknown mount option \"" + opt +
          "\" (known: ro, rw, region=, token_file=, read_ahead=, "
          "max_cache_mb=, timeout=, metrics_listen=, force, sync, writeback_ms=, and mount(8)'s "
          "own)");
    }
  }
  m.quiet = true;
  return m;
}

}  // namespace archil::mount
