// The mount daemon: one disk mounted at one mount point, served until it is unmounted
// (docs/semantics.md §5, docs/cli.md). It opens the disk's session (DiskClient), mounts through
// the FUSE adapter, tells its parent on a pipe when the mount is usable, then:
//  - every second rewrites its mount record (api/mount_record.h) with its counters, and logs
//    reconnections and failed requests to the journal;
//  - every `sync_interval_ms` has a child process run `sync -f MOUNTPOINT`, so that dirty pages
//    reach the server within that bound and not the kernel's 30 s (the daemon itself never makes
//    a system call on its own mount: blocked there, a killed daemon could never exit), and (unless
//    `sync`) makes the names and attributes answered before the server's sync durable
//    (DiskClient::Commit, docs/adr/0027), as fsync does at once;
//  - on SIGTERM, SIGINT or SIGHUP unmounts lazily and aborts the FUSE connection;
//  - with an owner (ARCHIL_OWNER_PID, base/owner_watch.h), aborts the connection, detaches the
//    mount and exits within a second of that process's death, from any state.
// When the kernel ends the connection (unmount), it ends its session with the server and exits.
// While no server answers, requests wait (forever by default, `timeout_s` if set) and log it to
// the journal once; a request whose caller is being killed gives up (EINTR) so that it can die.
//
// Thread-safety: RunDaemon is called once per process, before any other thread exists.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

namespace archil::mount {

struct DaemonOptions {
  std::string disk_ref;    // as the user named it: DISK or DISK:/SUBDIR
  std::string disk;        // id or name
  std::string subdir;      // "" = the disk's root
  std::string mountpoint;  // absolute
  std::string server;      // the disk server's host:port (tls:// to force TLS)
  std::string ca_file;
  bool allow_cleartext = false;
  std::string token;
  std::string token_file;  // where `token` was read from (absolute); "" = ARCHIL_MOUNT_TOKEN
  std::string run_dir;     // where mount records go
  bool read_only = false;
  std::string checkpoint;  // "" = the disk's head; else that checkpoint (read_only is set)
  bool force = false;      // take the disk over from a mount elsewhere
  uint32_t read_ahead_kb = 1024;
  uint32_t max_cache_mb = 0;  // 0: the kernel's default bound on dirty pages
  int sync_interval_ms = 2000;
  bool sync = false;  // every operation durable before it is answered (no UNSTABLE mutations)
  int timeout_s = 0;  // 0: requests wait for the server forever; else they fail (EIO) after it
  std::string metrics_listen;  // "": no HTTP endpoint (the control socket serves them anyway)
  pid_t owner_pid = 0;         // 0: none; else the process whose death ends the mount
  std::string journal_socket = "/run/systemd/journal/socket";
  int64_t start_ns = 0;  // CLOCK_MONOTONIC at the command's start (for "Mounted disk in N ms")
};

// Runs the mount. Writes one line to `ready_fd` and closes it: "OK <mount ms>" once the mount
// is usable, or "ERR <exit code> <message>" if it could not be made. Returns the process's exit
// code.
int RunDaemon(const DaemonOptions& options, int ready_fd);

// The ready line, both ways.
std::string ReadyOk(double mount_ms);
std::string ReadyErr(int exit_code, const std::string& message);
struct ReadyLine {
  bool ok = false;
  double mount_ms = 0;
  int exit_code = 0;
  std::string message;
};
// False if `line` is neither form.
bool ParseReady(const std::string& line, ReadyLine* out);

int64_t MonotonicNanos();

}  // namespace archil::mount
