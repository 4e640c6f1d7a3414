// What the server reports at scrape time beside the counters its parts keep themselves (the disk
// server's archil_disk_*, the API's archil_api_*): the engine's commits, the disk server's
// connections and buffers, the catalog's size and purge backlog, the tier's backlog and failures.
// Every name, with its unit, is listed in docs/operations.md.
#pragma once

#include "catalog/catalog.h"
#include "engine/engine.h"
#include "metrics/registry.h"
#include "server/disk_server.h"
#include "tier_service.h"

namespace archil {

// REQUIRES: every pointer (tier may be null) outlives the registry's last Render.
void AddServerCollectors(metrics::Registry* registry, engine::Engine* engine,
                         server::DiskServer* disk_server, Catalog* catalog,
                         const TierService* tier);

}  // namespace archil
