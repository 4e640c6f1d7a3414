// The kernel's mount table (/proc/self/mountinfo), read without touching the mounts themselves,
// and the kernel's FUSE control files (/sys/fs/fuse/connections): a `stat` on a mount whose
// daemon died or stopped blocks or fails, so the tools that clean up after such a daemon
// (`archil unmount -f`, `archil mount` over a dead mount, the test runner's sweep) find its
// mount by name and end its connection through the control file.
//
// Thread-safety: free functions.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/status.h"

namespace archil {

struct MountEntry {
  std::string mountpoint;  // unescaped
  std::string fs_type;     // "fuse.archil" for ours
  std::string source;      // "archil:<disk id>"
  unsigned major = 0;
  unsigned minor = 0;  // for FUSE: the connection's number in /sys/fs/fuse/connections
};

// Every mount of `table` (the mountinfo text; empty reads /proc/self/mountinfo), in its order:
// a later entry at the same mount point is mounted on top of an earlier one.
std::vector<MountEntry> ListMounts(const std::string& table = "");
// The topmost mount at `mountpoint` (absolute, normalized), if any.
std::optional<MountEntry> FindMount(const std::string& mountpoint, const std::string& table = "");

// Ends FUSE connection `minor` (its control file's `abort`): every request waiting on it fails
// at once (ENOTCONN) and its daemon's loop ends. Mounts the fusectl file system at
// /sys/fs/fuse/connections first if it is not there (containers often lack it). Errors: not
// root, no such connection (the mount is gone already: NotFound).
Status AbortFuseConnection(unsigned minor);

// Ends FUSE mount `m` whatever its daemon is doing: aborts its connection (as above; a connection
// already gone is no error), then detaches it (umount2 with MNT_FORCE | MNT_DETACH; a mount
// already gone is no error). Errors: the detach's (EPERM as PermissionDenied).
Status AbortAndDetach(const MountEntry& m);

}  // namespace archil
