// The kernel's mount table (/proc/self/mountinfo), read without touching the mounts themselves:
// a `stat` on a mount whose daemon died blocks or fails, so tools that clean up after such a
// daemon must find its mount by name.
//
// Thread-safety: free functions.
#pragma once

#include <optional>
#include <string>

namespace archil::mount {

struct MountEntry {
  std::string mountpoint;  // unescaped
  std::string fs_type;     // "fuse.archil" for ours
  std::string source;      // "archil:<disk id>"
  unsigned major = 0;
  unsigned minor = 0;  // for FUSE: the connection's number in /sys/fs/fuse/connections
};

// The topmost mount at `mountpoint` (absolute, normalized), if any. `table`: the mountinfo text
// (tests), or empty to read /proc/self/mountinfo.
std::optional<MountEntry> FindMount(const std::string& mountpoint, const std::string& table = "");

}  // namespace archil::mount
