#include "api/mount_table.h"

#include <fcntl.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace archil {
namespace {

constexpr char kFuseCtl[] = "/sys/fs/fuse/connections";

// mountinfo escapes space, tab, newline and backslash as \ooo.
std::string Unescape(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size()) {
      int v = 0;
      bool ok = true;
      for (size_t k = 1; k <= 3; ++k) {
        char c = s[i + k];
        if (c < '0' || c > '7') ok = false;
        v = v * 8 + (c - '0');
      }
      if (ok) {
        out.push_back(static_cast<char>(v));
        i += 3;
        continue;
      }
    }
    out.push_back(s[i]);
  }
  return out;
}

bool FuseCtlMounted() {
  for (const MountEntry& e : ListMounts()) {
    if (e.fs_type == "fusectl" && e.mountpoint == kFuseCtl) return true;
  }
  return false;
}

}  // namespace

std::vector<MountEntry> ListMounts(const std::string& table) {
  std::string text = table;
  if (text.empty()) {
    std::ifstream in("/proc/self/mountinfo");
    std::stringstream ss;
    ss << in.rdbuf();
    text = ss.str();
  }
  std::vector<MountEntry> out;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    // id parent major:minor root mountpoint options [optional...] - fstype source superoptions
    std::istringstream f(line);
    std::vector<std::string> fields;
    std::string w;
    while (f >> w) fields.push_back(w);
    if (fields.size() < 7) continue;
    size_t dash = 6;
    while (dash < fields.size() && fields[dash] != "-") ++dash;
    if (dash + 2 >= fields.size()) continue;
    MountEntry e;
    e.mountpoint = Unescape(fields[4]);
    if (std::sscanf(fields[2].c_str(), "%u:%u", &e.major, &e.minor) != 2) continue;
    e.fs_type = fields[dash + 1];
    e.source = Unescape(fields[dash + 2]);
    out.push_back(std::move(e));
  }
  return out;
}

std::optional<MountEntry> FindMount(const std::string& mountpoint, const std::string& table) {
  std::optional<MountEntry> found;
  for (MountEntry& e : ListMounts(table)) {
    if (e.mountpoint == mountpoint) found = std::move(e);  // later lines are on top
  }
  return found;
}

Status AbortFuseConnection(unsigned minor) {
  if (!FuseCtlMounted() && ::mount("fusectl", kFuseCtl, "fusectl", 0, nullptr) != 0 &&
      errno != EBUSY) {
    return Status::FromErrno(errno, std::string("mount fusectl at ") + kFuseCtl);
  }
  const std::string path = std::string(kFuseCtl) + "/" + std::to_string(minor) + "/abort";
  const int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return Status::NotFound("no FUSE connection " + std::to_string(minor));
    return Status::FromErrno(errno, "open " + path);
  }
  const bool written = write(fd, "1", 1) == 1;
  const int err = errno;
  close(fd);
  if (!written) return Status::FromErrno(err, "write " + path);
  return Status::Ok();
}

Status AbortAndDetach(const MountEntry& m) {
  Status aborted = AbortFuseConnection(m.minor);
  if (aborted.code() == Status::Code::kNotFound) aborted = Status::Ok();
  if (umount2(m.mountpoint.c_str(), MNT_FORCE | MNT_DETACH) != 0 && errno != EINVAL) {
    if (errno == EPERM) return Status::PermissionDenied("only root can unmount " + m.mountpoint);
    return Status::FromErrno(errno, "detach " + m.mountpoint);
  }
  // Detached: what waited on it is gone with it, so a failed abort is worth a word only.
  if (!aborted.ok()) std::fprintf(stderr, "archil: %s\n", aborted.message().c_str());
  return Status::Ok();
}

}  // namespace archil
