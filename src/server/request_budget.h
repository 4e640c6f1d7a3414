// RequestBudget: the request bytes a disk server holds (each frame from the moment its header is
// admitted until it is answered), shared so that no token holder can take what other disks need
// (docs/protocol.md §12).
//
// A frame of `bytes` is admitted for a connection bound to disk `disk` when all three hold:
//   - the connection: what it holds + bytes <= per_connection, or it holds nothing;
//   - the disk: what all its connections hold + bytes <= per_disk, or the disk holds nothing;
//   - the server: the total + bytes <= total, or the disk holds nothing.
// "Or ... holds nothing" guarantees progress: a disk whose clients hold no bytes always gets one
// frame in, whatever others hold, so the total may pass its cap by one frame per such disk (at
// most 4.25 MiB each, and a frame that does not complete is closed at its deadline). Frames of
// connections not yet bound (disk 0: at most 64 KiB each, and few: their pool is bounded) are
// always admitted and counted in the total.
//
// Thread-safety: safe for concurrent use (the I/O thread charges, workers discharge).
#pragma once

#include <cstdint>
#include <map>

#include "base/mutex.h"

namespace archil::server {

class RequestBudget {
 public:
  struct Limits {
    uint64_t total = uint64_t{1} << 30;
    uint64_t per_disk = uint64_t{256} << 20;
    uint64_t per_connection = uint64_t{64} << 20;
  };
  explicit RequestBudget(Limits limits) : limits_(limits) {}

  enum class Verdict {
    kAdmitted,
    kOverShare,  // the connection's or its disk's: wait for that disk to discharge
    kOverTotal,  // the server's: wait for the total to drop below its cap
  };
  // Admits `bytes` for a connection of `disk` (0: not bound yet) that holds `connection_holds`:
  // charges the disk and the total (kAdmitted), or charges nothing and says which limit held.
  Verdict TryCharge(uint64_t disk, uint64_t connection_holds, uint64_t bytes) ARCHIL_EXCLUDES(mu_);
  // Returns `bytes` charged to `disk`.
  void Discharge(uint64_t disk, uint64_t bytes) ARCHIL_EXCLUDES(mu_);
  // Counts discharges: a caller that was refused when this read N and sees it still N after
  // registering to be woken by the next discharge has missed none.
  uint64_t discharges() const ARCHIL_EXCLUDES(mu_);

  // How many more bytes frames of `disk` could be admitted for now (by its share and the
  // total; a connection's own share aside): what a discharge lets the waiting frames have.
  // UINT64_MAX while the disk holds nothing (its next frame is admitted whatever its size).
  uint64_t Room(uint64_t disk) const ARCHIL_EXCLUDES(mu_);
  // How many more bytes fit under the total.
  uint64_t TotalRoom() const ARCHIL_EXCLUDES(mu_);

  uint64_t total() const ARCHIL_EXCLUDES(mu_);
  uint64_t peak() const ARCHIL_EXCLUDES(mu_);
  uint64_t of_disk(uint64_t disk) const ARCHIL_EXCLUDES(mu_);
  const Limits& limits() const { return limits_; }

 private:
  const Limits limits_;
  mutable Mutex mu_;
  uint64_t total_ ARCHIL_GUARDED_BY(mu_) = 0;
  uint64_t peak_ ARCHIL_GUARDED_BY(mu_) = 0;
  uint64_t discharges_ ARCHIL_GUARDED_BY(mu_) = 0;
  std::map<uint64_t, uint64_t> disks_ ARCHIL_GUARDED_BY(mu_);  // only disks holding bytes
};

}  // namespace archil::server
