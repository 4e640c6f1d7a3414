// DiskPurger: removes deleted disks in the background.
//
// DELETE /api/disks/{id} only marks a disk deleting (it disappears from the API and its tokens
// stop working at once); this thread then removes its data directory and its catalog rows. It
// also finishes purges a crash interrupted, since it scans the catalog on start.
//
// Thread-safety: Wake() and Stop() may be called from any thread.
#pragma once

#include <string>
#include <thread>

#include "base/mutex.h"
#include "control/catalog.h"

namespace archil {

class DiskPurger {
 public:
  // `disks_dir`: where per-disk data lives (DATA_DIR/disks); <disks_dir>/<id> is removed.
  DiskPurger(Catalog* catalog, std::string disks_dir);
  ~DiskPurger();  // Stop()s

  void Start();
  void Wake();
  // Finishes the purge in progress, then joins the thread.
  void Stop();

  // One pass over the disks waiting to be purged (also used by tests).
  Status PurgeOnce();

 private:
  void Loop();

  Catalog* const catalog_;
  const std::string disks_dir_;
  Mutex mu_;
  CondVar cv_{&mu_};
  bool stop_ ARCHIL_GUARDED_BY(mu_) = false;
  bool wake_ ARCHIL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace archil
