// archil metrics [MOUNTPOINT]: a mount's metrics from its daemon, through the mount's control
// socket (api/mount_control.h): the Prometheus exposition format, or JSON with --json
// (docs/operations.md lists every metric).
#include <cstdio>

#include "api/endpoints.h"
#include "api/mount_control.h"
#include "api/mount_record.h"
#include "cli/commands.h"
#include "cli/mount_exchange.h"

namespace archil {
namespace {

// The mount meant: MOUNTPOINT, or the only live mount of this machine.
Result<MountRecord> ChooseMount(const std::string& run_dir, const std::string& path) {
  if (!path.empty()) {
    const std::string mnt = NormalizeMountpoint(path);
    Result<MountRecord> rec = ReadMountRecord(run_dir, mnt);
    if (!rec.ok() || !ProcessAlive(rec->pid)) {
      return Status::NotFound(mnt +
                              " is not an archil mount on this machine (see `archil status`)");
    }
    return rec;
  }
  std::vector<MountRecord> live;
  for (MountRecord& r : ListMountRecords(run_dir)) {
    if (ProcessAlive(r.pid)) live.push_back(std::move(r));
  }
  if (live.empty()) return Status::NotFound("no archil disk is mounted on this machine");
  if (live.size() > 1) {
    std::string names;
    for (const MountRecord& r : live) names += (names.empty() ? "" : ", ") + r.mountpoint;
    return Status::InvalidArgument("several disks are mounted here (" + names +
                                   "): name one, `archil metrics MOUNTPOINT`");
  }
  return std::move(live.front());
}

Status Metrics(const CliContext& ctx, const std::string& path) {
  const std::string run_dir = ResolveOptionsFromEnv().run_dir;
  ARCHIL_ASSIGN_OR_RETURN(MountRecord rec, ChooseMount(run_dir, path));
  ControlRequest ask;
  ask.op = "metrics";
  ask.format = ctx.options.json ? "json" : "text";
  ARCHIL_ASSIGN_OR_RETURN(
      std::string line,
      ExchangeWithMount(MountControlPath(run_dir, rec.mountpoint), EncodeControlRequest(ask)));
  ARCHIL_ASSIGN_OR_RETURN(ControlReply reply, DecodeControlReply(line));
  ARCHIL_RETURN_IF_ERROR(reply.status);
  if (reply.metrics.empty()) {
    return Status::Corruption(
        "the mount's daemon answered without metrics: remount with this client");
  }
  std::fwrite(reply.metrics.data(), 1, reply.metrics.size(), stdout);
  return Status::Ok();
}

}  // namespace

void AddMetricsCommand(CLI::App& app, CliContext* ctx) {
  auto* metrics = app.add_subcommand(
      "metrics", "Print a mount's metrics (Prometheus text format; --json for JSON)");
  auto path = std::make_shared<std::string>();
  metrics->add_option("mountpoint", *path, "The mount (default: the only one)");
  metrics->footer(
      "Examples:\n"
      "  archil metrics /mnt/data                 the mount's counters, Prometheus text format\n"
      "  archil metrics --json | jq '.families[] | select(.name == "
      "\"archil_client_requests_total\")'\n"
      "A daemon can also serve them over HTTP: archil mount --metrics-listen 127.0.0.1:9843 ...");
  metrics->callback([ctx, path] { ctx->action = [ctx, path] { return Metrics(*ctx, *path); }; });
}

}  // namespace archil
