// DiskDataStore: a disk's data as the control plane sees it: something to purge.
//
// DELETE /api/disks/{id} only marks a disk deleting; the purger (control/purger.h) later asks the
// store to free the disk's data, then removes the catalog rows. The data plane implements it over
// the storage engine (dataplane/engine_disks.h); the purger's tests, with a fake.
//
// Thread-safety: implementations are safe for concurrent use.
#pragma once

#include "base/ids.h"
#include "base/status.h"

namespace archil {

class DiskDataStore {
 public:
  virtual ~DiskDataStore() = default;
  // Frees all of `disk`'s data. Idempotent: OK when there is none (a purge a crash interrupted is
  // simply run again). FailedPrecondition: the disk has branches, whose reads go through its
  // data, so it was hidden instead and its catalog row must stay (KeepDiskForBranches). Any
  // other failure leaves the disk to be purged on a later pass.
  virtual Status PurgeDiskData(const DiskId& disk) = 0;
};

}  // namespace archil
