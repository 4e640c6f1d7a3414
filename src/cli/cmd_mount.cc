// archil mount (execs archil-mount; listed here for --help), archil unmount [-f] MOUNTPOINT,
// archil status [MOUNTPOINT]: the mounts of this machine, from their records
// (api/mount_record.h).
#include <signal.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <thread>

#include "api/endpoints.h"
#include "api/mount_record.h"
#include "api/mount_table.h"
#include "cli/commands.h"
#include "cli/output.h"

namespace archil {
namespace {

int64_t NowMillis() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// How long `archil unmount` waits for the kernel to hand the mount's dirty pages to its daemon
// (a daemon whose server is away may never take them), and `-f` for the daemon to exit.
constexpr int kUnmountWaitMs = 10000;
constexpr int kDaemonExitWaitMs = 10000;
constexpr int kForcedDaemonExitWaitMs = 250;

// Waits up to `ms` for `pid` to end; whether it did.
bool WaitForExit(pid_t pid, int ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (ProcessAlive(pid) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return !ProcessAlive(pid);
}

// The errno of umount2(mnt, 0), run in a child process so that a daemon that never answers
// cannot hang this command: -1 if it has not returned within `ms` (the child then finishes
// whenever the mount ends; nothing waits for it).
int UnmountInChild(const std::string& mnt, int ms) {
  const pid_t pid = fork();
  if (pid < 0) return errno;
  if (pid == 0) _exit(umount2(mnt.c_str(), 0) == 0 ? 0 : (errno & 0xff));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  int status = 0;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() >= deadline) return -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : EIO;
}

// The archil mount at `mnt`, found by name in the mount table (no system call on the mount).
Result<MountEntry> ArchilMountAt(const std::string& mnt) {
  std::optional<MountEntry> m = FindMount(mnt);
  if (!m) return Status::NotFound(mnt + " is not a mount point");
  if (m->fs_type != "fuse.archil") {
    return Status::InvalidArgument(mnt + " is not an archil mount (it is " + m->fs_type + ")");
  }
  return *m;
}

// -f: abort the FUSE connection (every waiting request fails at once, whatever the daemon and
// its server are doing), detach the mount, and end a daemon that does not exit by itself (it is
// stopped or stuck: every write it acknowledged is on the server already).
Status ForceUnmount(const MountEntry& m, const std::string& run_dir,
                    const Result<MountRecord>& rec) {
  ARCHIL_RETURN_IF_ERROR(AbortAndDetach(m));
  if (!rec.ok()) return Status::Ok();
  const pid_t pid = rec.value().pid;
  // A stopped daemon cannot exit by itself: it is killed at once.
  if (ProcessStopped(pid) || !WaitForExit(pid, kForcedDaemonExitWaitMs)) {
    std::fprintf(stderr, "archil: %s: its daemon (pid %d) did not exit; killed it\n",
                 m.mountpoint.c_str(), pid);
    kill(pid, SIGKILL);
    (void)WaitForExit(pid, kForcedDaemonExitWaitMs);
  }
  if (!ProcessAlive(pid)) RemoveMountRecord(run_dir, m.mountpoint);
  return Status::Ok();
}

Status Unmount(const std::string& path, bool force) {
  const std::string mnt = NormalizeMountpoint(path);
  const std::string run_dir = ResolveOptionsFromEnv().run_dir;
  Result<MountRecord> rec = ReadMountRecord(run_dir, mnt);
  Result<MountEntry> m = ArchilMountAt(mnt);
  if (!m.ok()) {
    if (m.status().code() == Status::Code::kNotFound && rec.ok()) RemoveMountRecord(run_dir, mnt);
    return m.status();
  }
  if (force) return ForceUnmount(*m, run_dir, rec);
  if (geteuid() != 0) return Status::PermissionDenied("only root can unmount " + mnt);
  const int e = UnmountInChild(mnt, kUnmountWaitMs);
  if (e < 0) {
    return Status::Unavailable(
        "the unmount of " + mnt + " has not finished after " +
        std::to_string(kUnmountWaitMs / 1000) + " s: its daemon" +
        (rec.ok() ? " (pid " + std::to_string(rec.value().pid) + ")" : std::string()) +
        " is not taking the last writes (is its server away? `archil status` says); `archil "
        "unmount -f " +
        mnt + "` aborts it, losing the writes no fsync returned for");
  }
  if (e != 0) {
    if (e == EBUSY) {
      return Status::Busy(mnt + " is busy: files or directories are open on it (`fuser -vm " + mnt +
                          "` lists them); `archil unmount -f " + mnt + "` detaches it anyway");
    }
    if (e == EINVAL || e == ENOENT) {
      if (rec.ok()) RemoveMountRecord(run_dir, mnt);
      return Status::NotFound(mnt + " is not a mount point");
    }
    if (e == EPERM) return Status::PermissionDenied("only root can unmount " + mnt);
    return Status::FromErrno(e, "unmount " + mnt);
  }
  if (!rec.ok()) return Status::Ok();
  // The daemon ends its session with the server once the kernel lets go of the connection.
  if (!WaitForExit(rec.value().pid, kDaemonExitWaitMs)) {
    std::fprintf(stderr, "archil: %s is unmounted, but its daemon (pid %d) has not ended yet\n",
                 mnt.c_str(), rec.value().pid);
  } else {
    RemoveMountRecord(run_dir, mnt);  // a daemon that was killed left it
  }
  return Status::Ok();
}

// A wall-clock time in milliseconds as UTC ISO 8601, to the second.
std::string IsoTime(int64_t unix_ms) {
  const time_t t = static_cast<time_t>(unix_ms / 1000);
  tm utc{};
  gmtime_r(&t, &utc);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &utc);
  return buf;
}

std::string StateOf(const MountRecord& r) {
  if (!ProcessAlive(r.pid)) return "dead (daemon gone: unmount or mount again)";
  if (NowMillis() - r.updated_unix_ms > 5000) return "stalled (no update for 5 s)";
  if (r.unreachable_since_unix_ms != 0) {
    return "server unreachable since " + IsoTime(r.unreachable_since_unix_ms) + " (" +
           std::to_string(r.waiting) + " requests waiting)";
  }
  return r.state;
}

std::string Mib(uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f", static_cast<double>(bytes) / (1 << 20));
  return buf;
}

Status Status_(const CliContext& ctx, const std::string& path) {
  std::vector<MountRecord> records;
  if (path.empty()) {
    records = ListMountRecords(ResolveOptionsFromEnv().run_dir);
  } else {
    ARCHIL_ASSIGN_OR_RETURN(
        MountRecord r, ReadMountRecord(ResolveOptionsFromEnv().run_dir, NormalizeMountpoint(path)));
    records.push_back(std::move(r));
  }
  if (ctx.options.json) {
    nlohmann::json out = nlohmann::json::array();
    for (const MountRecord& r : records) {
      nlohmann::json j = nlohmann::json::parse(MountRecordJson(r));
      j["state"] = StateOf(r);
      out.push_back(j);
    }
    PrintJson(path.empty() ? out : out[0]);
    return Status::Ok();
  }
  if (records.empty()) {
    if (!ctx.options.quiet) std::printf("No archil disks are mounted on this machine.\n");
    return Status::Ok();
  }
  std::vector<std::vector<std::string>> rows;
  for (const MountRecord& r : records) {
    const std::string disk = r.checkpoint.empty() ? r.disk : r.disk + "@" + r.checkpoint;
    rows.push_back({r.mountpoint, disk, r.disk_id, r.server, StateOf(r), std::to_string(r.pid),
                    std::to_string(r.in_flight), std::to_string(r.unsynced),
                    std::to_string(r.open_files), Mib(r.bytes_read), Mib(r.bytes_written),
                    std::to_string(r.reconnects), std::to_string(r.errors)});
  }
  PrintTable(ctx.options.quiet,
             {"MOUNTPOINT", "DISK", "DISK ID", "SERVER", "STATE", "PID", "IN FLIGHT", "UNSYNCED",
              "OPEN", "READ MiB", "WRITTEN MiB", "RECONNECTS", "ERRORS"},
             rows);
  if (!ctx.options.quiet) {
    std::printf(
        "UNSYNCED: operations the server answered before its sync, durable at the next fsync "
        "on the mount or within its --writeback-ms (2 s by default; none on a --sync mount); "
        "dirty pages in the kernel reach the server within the same bound or at fsync.\n");
  }
  return Status::Ok();
}

}  // namespace

void AddMountCommands(CLI::App& app, CliContext* ctx) {
  // RunCli() execs `archil mount ...` (archil-mount) before parsing; listed for --help only.
  CLI::App* mount = app.add_subcommand(
      "mount", "Mount a disk: archil mount DISK[:/SUBDIR] MOUNTPOINT (see `archil mount --help`)");
  mount->allow_extras();
  mount->callback([ctx, mount] {
    ctx->action = [mount] { return ExecBeside("archil-mount", mount->remaining()); };
  });

  auto* unmount = app.add_subcommand("unmount", "Unmount a disk");
  unmount->footer(
      "Examples:\n"
      "  archil unmount /mnt/data                  waits for the last writes (10 s at most)\n"
      "  archil unmount -f /mnt/data               at once, whatever the daemon or server does");
  auto path = std::make_shared<std::string>();
  auto force = std::make_shared<bool>(false);
  unmount->add_option("mountpoint", *path, "Where the disk is mounted")->required();
  unmount->add_flag("-f,--force", *force,
                    "Abort and detach at once, whatever the daemon or server is doing (open files "
                    "then fail; writes no fsync returned for are lost)");
  unmount->callback(
      [ctx, path, force] { ctx->action = [path, force] { return Unmount(*path, *force); }; });

  auto* status = app.add_subcommand("status", "Show this machine's mounts");
  status->footer(
      "Examples:\n"
      "  archil status\n"
      "  archil --json status /mnt/data");
  auto status_path = std::make_shared<std::string>();
  status->add_option("mountpoint", *status_path, "One mount (default: all)");
  status->callback([ctx, status_path] {
    ctx->action = [ctx, status_path] { return Status_(*ctx, *status_path); };
  });
}

}  // namespace archil
