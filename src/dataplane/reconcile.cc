#include "dataplane/reconcile.h"

#include <algorithm>
#include <set>

#include "base/log.h"
#include "dataplane/engine_disks.h"

namespace archil {

Status Reconcile(Catalog* catalog, engine::Engine* engine) {
  std::set<uint64_t> roots;  // live and kept catalog disks
  PageRequest page;
  page.limit = 100;
  while (true) {
    ARCHIL_ASSIGN_OR_RETURN(Page<Disk> disks, catalog->ListDisks(page, ""));
    for (const Disk& d : disks.items) {
      ARCHIL_ASSIGN_OR_RETURN(engine::DiskNo no, engine::DiskNoFromId(d.id));
      roots.insert(no.value());
      if (!engine->Disk(no).ok()) {
        ARCHIL_LOG(kInfo) << "reconcile: disk " << d.id << " has no tree (a crash after its "
                          << "create): creating it";
        ARCHIL_RETURN_IF_ERROR(EnsureEngineDisk(engine, d));
      }
    }
    if (disks.next_cursor.empty()) break;
    page.cursor = disks.next_cursor;
  }
  ARCHIL_ASSIGN_OR_RETURN(std::vector<DiskId> kept, catalog->DisksKeptForBranches());
  for (const DiskId& id : kept) {
    ARCHIL_ASSIGN_OR_RETURN(engine::DiskNo no, engine::DiskNoFromId(id));
    if (engine->Lineage(no).ok()) {
      roots.insert(no.value());
      continue;
    }
    ARCHIL_LOG(kInfo) << "reconcile: disk " << id << " was kept for branches that are gone: "
                      << "removing its row";
    ARCHIL_RETURN_IF_ERROR(catalog->PurgeDisk(id));
  }
  // Branches first (newest lineages last), so that deleting a root never meets a live branch.
  std::vector<engine::DiskNo> orphans;
  for (engine::DiskNo no : engine->ListDisks()) {
    Result<engine::LineageInfo> l = engine->Lineage(no);
    if (!l.ok() || roots.count(l->root.value())) continue;
    orphans.push_back(no);
  }
  std::stable_partition(orphans.begin(), orphans.end(), [&](engine::DiskNo no) {
    Result<engine::LineageInfo> l = engine->Lineage(no);
    return l.ok() && l->parent.value() != 0;
  });
  for (engine::DiskNo no : orphans) {
    ARCHIL_LOG(kInfo) << "reconcile: " << engine::DiskIdFromNo(no)
                      << " has a tree but no live disk in the catalog: deleting it";
    Status s = engine->DeleteDisk(no);
    if (!s.ok() && s.code() != Status::Code::kNotFound) return s;
  }
  return Status::Ok();
}

}  // namespace archil
