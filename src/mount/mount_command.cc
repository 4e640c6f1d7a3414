#include "mount/mount_command.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "api/endpoints.h"
#include "api/exit_code.h"
#include "api/mount_record.h"
#include "api/mount_table.h"
#include "base/owner_watch.h"
#include "mount/daemon.h"
#include "mount/discover.h"
#include "mount/mount_args.h"

namespace archil::mount {
namespace {

constexpr int kReadyTimeoutMs = 30000;
// How long the API may take to say where its disk server is.
constexpr int kDiscoverTimeoutMs = 10000;

// The disk token: ARCHIL_MOUNT_TOKEN, else the token file (--token-file, else
// /etc/archil/<DISK>.token if it exists). Never a flag's value: a long-running process's command
// line is world-readable. `*file_used`: the file's absolute path ("" for the variable), which the
// mount record names so that `archil share` may read the same token (if its user can).
Result<std::string> ReadToken(const MountArgs& a, const std::string& disk, std::string* file_used) {
  file_used->clear();
  const char* env = std::getenv("ARCHIL_MOUNT_TOKEN");
  if (env && *env && a.token_file.empty()) return std::string(env);
  std::string file = a.token_file.empty() ? "/etc/archil/" + disk + ".token" : a.token_file;
  std::error_code ec;
  *file_used = std::filesystem::absolute(file, ec).lexically_normal().string();
  if (ec) *file_used = "";
  std::ifstream in(file);
  if (!in) {
    if (!a.token_file.empty()) return Status::NotFound("cannot read the token file " + file);
    return Status::PermissionDenied("no disk token for " + disk +
                                    ": set ARCHIL_MOUNT_TOKEN or pass --token-file FILE (`archil "
                                    "users add " +
                                    disk + "` makes one)");
  }
  std::string token;
  std::getline(in, token);
  while (!token.empty() && (token.back() == '\r' || token.back() == ' ')) token.pop_back();
  if (token.empty()) return Status::InvalidArgument("the token file " + file + " is empty");
  return token;
}

// A mount point left by a daemon that was killed: its mount is still in the table, but no
// process serves it. Detaching it needs no system call on the dead mount.
Status ClearDeadMount(const std::string& mountpoint, const std::string& run_dir, bool* busy,
                      std::string* holder) {
  *busy = false;
  std::optional<MountEntry> m = FindMount(mountpoint);
  if (!m || m->fs_type != "fuse.archil") return Status::Ok();
  Result<MountRecord> r = ReadMountRecord(run_dir, mountpoint);
  if (r.ok() && ProcessAlive(r.value().pid)) {
    *busy = true;
    *holder = r.value().disk + " (daemon pid " + std::to_string(r.value().pid) + ")";
    return Status::Ok();
  }
  ARCHIL_RETURN_IF_ERROR(AbortAndDetach(*m).WithContext("clear the dead mount at " + mountpoint));
  RemoveMountRecord(run_dir, mountpoint);
  return Status::Ok();
}

Status CheckMountpoint(const std::string& mountpoint) {
  struct stat st {};
  if (stat(mountpoint.c_str(), &st) != 0) {
    if (errno == ENOENT) {
      return Status::NotFound("the mount point " + mountpoint + " does not exist (mkdir it first)");
    }
    return Status::FromErrno(errno, "the mount point " + mountpoint);
  }
  if (!S_ISDIR(st.st_mode)) {
    return Status::InvalidArgument("the mount point " + mountpoint + " is not a directory");
  }
  return Status::Ok();
}

Status Prepare(const MountArgs& a, DaemonOptions* o) {
  if (a.shared) {
    return Status::InvalidArgument(
        "--shared is not supported yet: disks mount exclusively (drop --shared)");
  }
  if (geteuid() != 0) {
    return Status::PermissionDenied(
        "archil mount must run as root: it serves every local user by their own permissions");
  }
  if (access("/dev/fuse", R_OK | W_OK) != 0) {
    return Status::FailedPrecondition(
        "FUSE is not available here (/dev/fuse: " + std::string(std::strerror(errno)) +
        "); load it with `modprobe fuse`, or in a container pass --device /dev/fuse");
  }
  o->disk_ref = a.disk_ref;
  ARCHIL_RETURN_IF_ERROR(SplitDiskRef(a.disk_ref, &o->disk, &o->subdir));
  o->mountpoint = NormalizeMountpoint(a.mountpoint);
  o->run_dir = ResolveOptionsFromEnv().run_dir;
  o->checkpoint = a.checkpoint;
  o->read_only = a.read_only || !a.checkpoint.empty();
  o->force = a.force;
  o->read_ahead_kb = a.read_ahead_kb;
  o->max_cache_mb = a.max_cache_mb;
  o->sync = a.sync;
  o->sync_interval_ms = static_cast<int>(a.writeback_ms);
  o->timeout_s = static_cast<int>(a.timeout_s);
  o->metrics_listen = a.metrics_listen;
  ARCHIL_ASSIGN_OR_RETURN(o->owner_pid, OwnerFromEnv());
  if (const char* j = std::getenv("ARCHIL_JOURNAL_SOCKET"); j && *j) o->journal_socket = j;

  bool busy = false;
  std::string holder;
  ARCHIL_RETURN_IF_ERROR(ClearDeadMount(o->mountpoint, o->run_dir, &busy, &holder));
  if (busy) {
    return Status::Busy(o->mountpoint + " is already mounted by archil: disk " + holder +
                        "; `archil unmount " + o->mountpoint + "` first");
  }
  ARCHIL_RETURN_IF_ERROR(CheckMountpoint(o->mountpoint));

  ResolveOptions r = ResolveOptionsFromEnv();
  if (!a.region.empty()) r.region = a.region;
  ARCHIL_ASSIGN_OR_RETURN(Endpoints e, ResolveEndpoints(r));
  if (const char* ca = std::getenv("ARCHIL_CA_FILE"); ca && *ca) o->ca_file = ca;
  if (e.mount_addr.empty()) {
    // Only the API's address is known (--endpoint, or a regions entry without "mount"): it
    // says where its disk server is.
    ARCHIL_ASSIGN_OR_RETURN(e.mount_addr,
                            DiscoverMountAddress(e.api_url, o->ca_file, kDiscoverTimeoutMs));
  }
  o->server = e.mount_addr;
  ARCHIL_ASSIGN_OR_RETURN(o->token, ReadToken(a, o->disk, &o->token_file));
  return Status::Ok();
}

int Fail(const Status& s) {
  std::fprintf(stderr, "%s\n", ErrorLine(s).c_str());
  return ExitCodeFor(s.code());
}

// Forks the daemon and waits until it says the mount is usable (or why not).
int ForkAndWait(const DaemonOptions& o, const MountArgs& a) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return Fail(Status::FromErrno(errno, "pipe"));
  std::string log = MountRecordPath(o.run_dir, o.mountpoint);
  log = log.substr(0, log.size() - 5) + ".log";
  pid_t pid = fork();
  if (pid < 0) return Fail(Status::FromErrno(errno, "fork the mount daemon"));
  if (pid == 0) {
    close(fds[0]);
    setsid();
    int null = open("/dev/null", O_RDWR | O_CLOEXEC);
    mkdir(o.run_dir.c_str(), 0755);
    mkdir(MountRecordsDir(o.run_dir).c_str(), 0755);
    int err = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
    dup2(null, 0);
    dup2(null, 1);
    dup2(err >= 0 ? err : null, 2);
    if (chdir("/") != 0) _exit(1);
    _exit(RunDaemon(o, fds[1]));
  }
  close(fds[1]);
  std::string line;
  pollfd p{fds[0], POLLIN, 0};
  char buf[512];
  while (line.find('\n') == std::string::npos && poll(&p, 1, kReadyTimeoutMs) > 0) {
    ssize_t n = read(fds[0], buf, sizeof(buf));
    if (n <= 0) break;
    line.append(buf, static_cast<size_t>(n));
  }
  close(fds[0]);
  ReadyLine ready;
  if (!ParseReady(line, &ready)) {
    return Fail(Status::IoError("the mount daemon ended before the mount was ready; see " + log +
                                " and `journalctl -t archil-<disk id>`"));
  }
  if (!ready.ok) {
    std::fprintf(stderr, "archil: %s\n", ready.message.c_str());
    return ready.exit_code;
  }
  if (!a.quiet) {
    std::printf("Mounted %s at %s in %.1f ms\n", o.disk_ref.c_str(), o.mountpoint.c_str(),
                ready.mount_ms);
  }
  return 0;
}

int Mount(const MountArgs& a, int64_t start_ns) {
  DaemonOptions o;
  o.start_ns = start_ns;
  if (Status s = Prepare(a, &o); !s.ok()) return Fail(s);
  if (a.fake) return 0;
  if (!a.no_fork) return ForkAndWait(o, a);
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return Fail(Status::FromErrno(errno, "pipe"));
  // In the foreground the ready line goes to standard output as it is.
  std::thread echo([fd = fds[0], quiet = a.quiet] {
    char buf[512];
    ssize_t n = read(fd, buf, sizeof(buf));
    ReadyLine r;
    if (n > 0 && ParseReady(std::string(buf, static_cast<size_t>(n)), &r)) {
      if (!r.ok)
        std::fprintf(stderr, "archil: %s\n", r.message.c_str());
      else if (!quiet)
        std::printf("Mounted in %.1f ms\n", r.mount_ms);
      std::fflush(stdout);
    }
    close(fd);
  });
  echo.detach();
  return RunDaemon(o, fds[1]);
}

}  // namespace

int MountMain(int argc, char** argv) {
  const int64_t start = MonotonicNanos();
  std::string self = argc > 0 ? argv[0] : "";
  self = self.substr(self.rfind('/') + 1);
  if (self == "mount.archil") {
    Result<MountArgs> a = ParseMountHelperArgs(std::vector<std::string>(argv + 1, argv + argc));
    if (!a.ok()) return Fail(a.status());
    return Mount(a.value(), start);
  }
  MountArgs a;
  CLI::App app{"Mount a disk: archil mount DISK[:/SUBDIR] MOUNTPOINT", "archil mount"};
  app.footer(
      "Examples:\n"
      "  archil mount data /mnt/data               the token from ARCHIL_MOUNT_TOKEN or\n"
      "                                            /etc/archil/data.token\n"
      "  archil mount data:/src /mnt/src --read-only\n"
      "  archil mount data /mnt/before --checkpoint before-upgrade\n"
      "  fstab: data /mnt/data archil _netdev,x-systemd.automount,timeout=30 0 0");
  app.add_option("disk", a.disk_ref, "Disk id or name, optionally :/SUBDIR")->required();
  app.add_option("mountpoint", a.mountpoint, "An existing directory")->required();
  app.add_option("--region", a.region,
                 "Region to mount from (else ARCHIL_REGION, else the local server)");
  app.add_option(
      "--token-file", a.token_file,
      "File holding the disk token (else ARCHIL_MOUNT_TOKEN, else /etc/archil/DISK.token)");
  app.add_option("--read-ahead", a.read_ahead_kb, "Kernel read-ahead in KiB (0: none)")
      ->check(CLI::Range(0u, 1u << 20))
      ->capture_default_str();
  app.add_option("--max-cache-mb", a.max_cache_mb,
                 "Bound on this mount's dirty page cache in MiB (0: the kernel's default)")
      ->check(CLI::Range(0u, 1u << 24));
  app.add_option("--timeout", a.timeout_s,
                 "Fail requests (EIO) after SECONDS without a server (0: wait, the default)")
      ->check(CLI::Range(0u, kMaxTimeoutS));
  app.add_option("--metrics-listen", a.metrics_listen,
                 "Serve this mount's Prometheus metrics at http://ADDR/metrics "
                 "(e.g. 127.0.0.1:9843; `archil metrics MOUNTPOINT` reads them without it)");
  app.add_flag("--read-only", a.read_only, "Mount read-only");
  app.add_option("--checkpoint", a.checkpoint,
                 "Mount this checkpoint of the disk, read-only (writes fail with EROFS)");
  app.add_flag("--no-fork", a.no_fork, "Stay in the foreground");
  app.add_flag("--force", a.force, "Take the disk over from another mount");
  app.add_flag("--shared", a.shared, "Shared mount (not supported yet)");
  app.add_flag("--sync", a.sync,
               "Make every operation durable before answering it (default: names and "
               "attributes durable at fsync, or within --writeback-ms)");
  app.add_option("--writeback-ms", a.writeback_ms,
                 "Bound on how long written data and answered operations wait before they are "
                 "durable on the server without an fsync")
      ->check(CLI::Range(kMinWritebackMs, kMaxWritebackMs))
      ->capture_default_str();
  app.add_flag("-q,--quiet", a.quiet, "Print nothing on success");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);
    std::fprintf(stderr, "archil: %s (see `archil mount --help`)\n", e.what());
    return 2;
  }
  return Mount(a, start);
}

}  // namespace archil::mount
