// Reconcile: the catalog and the engine made to agree at start (dataplane/engine_disks.h says
// which is the truth for what).
#pragma once

#include "catalog/catalog.h"
#include "engine/engine.h"

namespace archil {

// At start, before the API and the disk server listen: every live catalog disk gets its engine
// tree if a crash lost it; every engine lineage whose root has no live or kept catalog row is
// deleted (a create whose catalog commit never happened, or a delete the purger had not
// finished); a kept row whose lineage is gone is purged. One log line per repair.
Status Reconcile(Catalog* catalog, engine::Engine* engine);

}  // namespace archil
