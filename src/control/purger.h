// DiskPurger: removes deleted disks in the background.
//
// DELETE /api/disks/{id} only marks a disk deleting (it disappears from the API and its tokens
// stop working at once); this thread then asks the DiskDataStore to free its data and only then
// removes its catalog rows, so a crash in between repeats the (idempotent) data purge rather than
// leaking the data. It also finishes purges a crash interrupted, since it scans the catalog on
// start. It listens to catalog events: a deleted disk wakes it.
//
// Thread-safety: Wake(), Stop() and the listener callbacks may be called from any thread.
#pragma once

#include <chrono>
#include <string_view>

#include "base/pass_loop.h"
#include "catalog/catalog.h"
#include "catalog/disk_data.h"
#include "catalog/events.h"

namespace archil {

class DiskPurger final : public CatalogListener {
 public:
  // `retry_delay`: how long to wait after a failed pass before trying again.
  DiskPurger(Catalog* catalog, DiskDataStore* data,
             std::chrono::milliseconds retry_delay = std::chrono::seconds(5));
  ~DiskPurger() override;  // Stop()s

  void Start();
  void Wake();
  // Finishes the purge in progress, then joins the thread.
  void Stop();

  // One pass over the disks waiting to be purged (also used by tests). Stops at the first
  // failure, leaving that disk and the ones after it for the next pass.
  Status PurgeOnce();

  // CatalogListener: a deleted disk wakes the purger; revoked tokens are not its business.
  void OnDiskDeleted(const DiskId& disk) override { Wake(); }
  void OnTokenRevoked(const DiskId& disk, std::string_view token_id) override {}

 private:
  Catalog* const catalog_;
  DiskDataStore* const data_;
  // A pass at start (purges a crash interrupted), every minute, 500 ms after a delete (a burst of
  // deletes makes one pass, and the purge's commits keep off the requests that follow a delete),
  // and `retry_delay` after a failure.
  PassLoop loop_;  // last: its thread stops before the rest goes
};

}  // namespace archil
