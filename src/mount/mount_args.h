// The arguments of a mount, from either command line that makes one:
//   archil mount [-q] DISK[:/SUBDIR] MOUNTPOINT [--region R] [--token-file F] [--read-ahead KiB]
//                [--max-cache-mb N] [--read-only] [--checkpoint NAME] [--no-fork] [--force]
//                [--timeout SECONDS] [--shared] [--sync] [--writeback-ms MS]
//   mount.archil DISK[:/SUBDIR] MOUNTPOINT [-s] [-f] [-n] [-v] [-o OPTIONS]   (mount -t archil,
//   fstab)
// mount.archil's OPTIONS: ro, rw, region=R, token_file=F, read_ahead=KiB, max_cache_mb=N,
// timeout=SECONDS, force, sync, writeback_ms=MS,
// and mount(8)'s own (defaults, _netdev, auto, noauto, nofail, user, nouser, users, owner,
// x-*, comment=*), which are accepted and ignored. Any other option is refused unless -s
// (sloppy) is given.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace archil::mount {

constexpr uint32_t kMaxTimeoutS = 86400;
constexpr uint32_t kMinWritebackMs = 100, kMaxWritebackMs = 600000;

struct MountArgs {
  std::string disk_ref;    // DISK or DISK:/SUBDIR
  std::string mountpoint;  // as given
  std::string region;
  std::string token_file;
  uint32_t read_ahead_kb = 1024;
  uint32_t max_cache_mb = 0;
  uint32_t timeout_s = 0;  // 0: wait for an unreachable server forever (NFS's hard mount)
  bool read_only = false;
  std::string checkpoint;      // --checkpoint NAME: that checkpoint, read-only
  std::string metrics_listen;  // --metrics-listen ADDR: serve the mount's metrics over HTTP
  bool no_fork = false;
  bool force = false;
  bool shared = false;
  // --sync: every operation durable before it is answered (no write-back of names and
  // attributes, docs/adr/0027).
  bool sync = false;
  // --writeback-ms: the write-back bound: dirty pages and unsynced operations reach durability on
  // the server within it (the daemon's `sync -f` and commit timer).
  uint32_t writeback_ms = 2000;
  bool quiet = false;
  bool fake = false;  // mount.archil -f: check everything, mount nothing
};

// mount.archil's argv (without argv[0]). InvalidArgument names what is wrong.
Result<MountArgs> ParseMountHelperArgs(const std::vector<std::string>& args);

// DISK[:/SUBDIR] into its two parts; InvalidArgument for an empty disk or a SUBDIR with "..".
Status SplitDiskRef(const std::string& ref, std::string* disk, std::string* subdir);

}  // namespace archil::mount
