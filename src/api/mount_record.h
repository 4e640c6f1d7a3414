// Mount records: what a running mount daemon tells `archil status` and `archil unmount` about
// itself, one JSON file per mount point under <run dir>/mounts/ (ARCHIL_RUN_DIR, default
// /run/archil), rewritten atomically by the daemon every second and removed when it ends.
//
//   {"mountpoint": "/mnt/demo", "disk": "demo", "disk_id": "dsk-...", "server": "127.0.0.1:8421",
//    "pid": 1234, "read_only": false, "checkpoint": "", "token_file": "/etc/archil/demo.token",
//    "started_unix_ms": ..., "mount_ms": 7.5,
//    "updated_unix_ms": ..., "state": "connected", "requests": ..., "in_flight": ...,
//    "errors": ..., "bytes_read": ..., "bytes_written": ..., "open_files": ...,
//    "held_orphans": ..., "read_ahead_hits": ..., "read_ahead_misses": ...,
//    "read_ahead_bytes": ..., "reconnects": ..., "retries": ..., "recreated": ...,
//    "unreachable_since_unix_ms": 0, "waiting": 0}
//
// A record whose pid is not alive belongs to a daemon that was killed: `archil mount` over that
// mount point clears it, and `archil status` reports it as dead.
//
// Thread-safety: free functions over the file system.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace archil {

struct MountRecord {
  std::string mountpoint;  // absolute, as mounted
  std::string disk;        // as the user named it (DISK or DISK:/SUBDIR)
  std::string disk_id;
  std::string server;  // the disk server's host:port
  pid_t pid = 0;
  bool read_only = false;
  std::string checkpoint;  // "" = the disk's head; else the checkpoint mounted (read-only)
  // The file the mount's disk token was read from (absolute; a path, never the token), for
  // `archil share` to make links with when it may read it; "" = the token came from
  // ARCHIL_MOUNT_TOKEN (or an archil before this field made the mount).
  std::string token_file;
  int64_t started_unix_ms = 0;
  double mount_ms = 0;  // from the daemon's start to the kernel's INIT answered
  int64_t updated_unix_ms = 0;
  std::string state = "connected";  // or "unreachable" (no server answers since the time below)
  uint64_t requests = 0;
  uint64_t in_flight = 0;  // FUSE requests being served
  // Operations not durable yet: those the server answered before its sync and no commit has
  // covered (docs/adr/0027), and attribute changes the mount answered itself and has not sent
  // (docs/adr/0028); durable at the next fsync or within the write-back bound, 2 s. 0 on a --sync
  // mount.
  uint64_t unsynced = 0;
  uint64_t errors = 0;
  // Attribute changes the mount answered that did not reach the disk (docs/adr/0028): write-back
  // errors, each reported once by the next fsync.
  uint64_t write_back_errors = 0;
  uint64_t bytes_read = 0;
  uint64_t bytes_written = 0;
  uint64_t open_files = 0;
  uint64_t held_orphans = 0;
  uint64_t read_ahead_hits = 0;    // READs answered from the mount's read-ahead (fs/read_ahead.h)
  uint64_t read_ahead_misses = 0;  // READs sent to the server
  uint64_t read_ahead_bytes = 0;   // read ahead and not yet used, in flight included
  uint64_t reconnects = 0;
  uint64_t retries = 0;
  uint64_t recreated = 0;
  int64_t unreachable_since_unix_ms = 0;  // 0 while a server answers
  uint64_t waiting = 0;                   // requests waiting for a server to answer, now
};

std::string MountRecordsDir(const std::string& run_dir);
// The record's file for `mountpoint` (its path, escaped into one file name).
std::string MountRecordPath(const std::string& run_dir, const std::string& mountpoint);

std::string MountRecordJson(const MountRecord& r);
// Corruption if `json` is not a record.
Result<MountRecord> ParseMountRecord(const std::string& json);

// Writes the record atomically (a temporary file renamed over it).
Status WriteMountRecord(const std::string& run_dir, const MountRecord& r);
// NotFound if there is none for `mountpoint`.
Result<MountRecord> ReadMountRecord(const std::string& run_dir, const std::string& mountpoint);
// Every record that parses, sorted by mount point.
std::vector<MountRecord> ListMountRecords(const std::string& run_dir);
void RemoveMountRecord(const std::string& run_dir, const std::string& mountpoint);

// `path` made absolute against the working directory and normalized lexically, with no system
// call on any of its components (one of them may be a mount whose daemon died).
std::string NormalizeMountpoint(const std::string& path);

// Whether a process with this pid is alive (kill(pid, 0), and not a zombie).
bool ProcessAlive(pid_t pid);

// Whether process `pid` is stopped (SIGSTOP, or a tracer's stop): it runs nothing, not even its
// own exit, until it is continued or killed.
bool ProcessStopped(pid_t pid);

}  // namespace archil
