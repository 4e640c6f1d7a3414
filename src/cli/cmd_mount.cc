// archil mount (execs archil-mount; listed here for --help), archil unmount [-f] MOUNTPOINT,
// archil status [MOUNTPOINT]: the mounts of this machine, from their records
// (api/mount_record.h).
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <thread>

#include "api/endpoints.h"
#include "api/mount_record.h"
#include "cli/commands.h"
#include "cli/output.h"

namespace archil {
namespace {

int64_t NowMillis() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

Status Unmount(const std::string& path, bool force) {
  const std::string mnt = NormalizeMountpoint(path);
  const std::string run_dir = ResolveOptionsFromEnv().run_dir;
  Result<MountRecord> rec = ReadMountRecord(run_dir, mnt);
  // -f: abort the connection and detach, even with files open (they then fail with ENOTCONN).
  int flags = force ? (MNT_FORCE | MNT_DETACH) : 0;
  if (umount2(mnt.c_str(), flags) != 0) {
    int e = errno;
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
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (ProcessAlive(rec.value().pid) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (ProcessAlive(rec.value().pid)) {
    std::fprintf(stderr, "archil: %s is unmounted, but its daemon (pid %d) has not ended yet\n",
                 mnt.c_str(), rec.value().pid);
  } else {
    RemoveMountRecord(run_dir, mnt);  // a daemon that was killed left it
  }
  return Status::Ok();
}

std::string StateOf(const MountRecord& r) {
  if (!ProcessAlive(r.pid)) return "dead (daemon gone: unmount or mount again)";
  if (NowMillis() - r.updated_unix_ms > 5000) return "stalled (no update for 5 s)";
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
                    std::to_string(r.in_flight), std::to_string(r.open_files), Mib(r.bytes_read),
                    Mib(r.bytes_written), std::to_string(r.reconnects), std::to_string(r.errors)});
  }
  PrintTable(ctx.options.quiet,
             {"MOUNTPOINT", "DISK", "DISK ID", "SERVER", "STATE", "PID", "IN FLIGHT", "OPEN",
              "READ MiB", "WRITTEN MiB", "RECONNECTS", "ERRORS"},
             rows);
  if (!ctx.options.quiet) {
    std::printf(
        "Pending writes: none in the daemons (each write they acknowledged is durable on the "
        "server); dirty pages in the kernel reach the server within 2 s or at fsync.\n");
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
  auto path = std::make_shared<std::string>();
  auto force = std::make_shared<bool>(false);
  unmount->add_option("mountpoint", *path, "Where the disk is mounted")->required();
  unmount->add_flag("-f,--force", *force, "Detach even with files open (they then fail)");
  unmount->callback(
      [ctx, path, force] { ctx->action = [path, force] { return Unmount(*path, *force); }; });

  auto* status = app.add_subcommand("status", "Show this machine's mounts");
  auto status_path = std::make_shared<std::string>();
  status->add_option("mountpoint", *status_path, "One mount (default: all)");
  status->callback([ctx, status_path] {
    ctx->action = [ctx, status_path] { return Status_(*ctx, *status_path); };
  });
}

}  // namespace archil
