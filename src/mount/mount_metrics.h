// The mount daemon's metrics (`archil metrics MOUNTPOINT`, `archil mount --metrics-listen`;
// docs/operations.md lists them): what the kernel asked of the mount (the FUSE adapter's
// counts), the mount's own state (open files, read-ahead), and the disk client's connection
// (reconnections, resends, an unreachable server). The client's per-call counts and latencies
// (archil_client_request*) are added by the DiskClient itself (client/call_metrics.h).
#pragma once

#include "client/disk_client.h"
#include "client/remote_fs.h"
#include "fs/mount_core.h"
#include "fuse/fuse_adapter.h"
#include "metrics/registry.h"

namespace archil::mount {

// Adds a collector reading the four at every scrape. REQUIRES: they outlive every Render of
// `registry` (stop whatever renders it before destroying them).
void AddMountCollectors(metrics::Registry* registry, fuse::Adapter* adapter,
                        const fs::MountCore* core, const client::RemoteFs* remote,
                        const client::DiskClient* disk);

}  // namespace archil::mount
