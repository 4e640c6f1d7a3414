#include "control/purger.h"

#include "base/log.h"

namespace archil {

DiskPurger::DiskPurger(Catalog* catalog, DiskDataStore* data, std::chrono::milliseconds retry_delay)
    : catalog_(catalog),
      data_(data),
      loop_("disk purge",
            {.interval_ms = 60'000,
             .retry_ms = static_cast<int>(retry_delay.count()),
             .settle_ms = 500,
             .first_at_start = true},
            [this] { return PurgeOnce(); }) {}

DiskPurger::~DiskPurger() { Stop(); }

void DiskPurger::Start() { loop_.Start(); }

void DiskPurger::Wake() { loop_.Kick(); }

void DiskPurger::Stop() { loop_.Stop(); }

Status DiskPurger::PurgeOnce() {
  ARCHIL_ASSIGN_OR_RETURN(std::vector<DiskId> ids, catalog_->DisksToPurge());
  for (const DiskId& id : ids) {
    Status s = data_->PurgeDiskData(id);
    if (s.code() == Status::Code::kFailedPrecondition) {
      // Branches made from it meanwhile read through its data: its row and tokens stay.
      ARCHIL_RETURN_IF_ERROR(catalog_->KeepDiskForBranches(id));
      ARCHIL_LOG(kInfo) << "disk " << id << " deleted; kept for its branches";
      continue;
    }
    ARCHIL_RETURN_IF_ERROR(s.WithContext("purge data of " + id.str()));
    ARCHIL_RETURN_IF_ERROR(catalog_->PurgeDisk(id));
    ARCHIL_LOG(kInfo) << "purged disk " << id;
  }
  return Status::Ok();
}

}  // namespace archil
