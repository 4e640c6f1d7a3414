// ServedDisks: what the disk server needs of the engine (docs/protocol.md §5, §7): the disks it
// serves (a head, a checkpoint's read-only view, the list), deleting a checkpoint whose mounts it
// ended, and its sessions with their reply-cache slots. The engine (engine/engine.h) is the one
// implementation; the server depends on this role, not on all of the engine.
//
// Thread-safety: implementations are safe for concurrent use.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "engine/commit/commit_hooks.h"
#include "engine/fs/disk_fs.h"
#include "engine/records/session_records.h"
#include "engine/types.h"

namespace archil::engine {

// A disk-server session as stored (formats.md §4.12), with its reply-cache slots.
struct StoredSession {
  SessionIdBytes id{};
  SessionRecord record;
  std::map<uint32_t, SlotRecord> slots;  // by slot number
};

class ServedDisks {
 public:
  virtual ~ServedDisks() = default;

  // ---- disks ----
  // The file system of a disk (its head). NotFound if unknown or hidden. Valid until the disk is
  // deleted or the engine destroyed.
  virtual Result<DiskFs*> Disk(DiskNo disk) = 0;
  // Every disk that is not hidden.
  virtual std::vector<DiskNo> ListDisks() = 0;
  // A read-only file system of a checkpoint (mutations fail with EROFS). REQUIRES: the
  // checkpoint is not deleted while the view is in use.
  virtual Result<std::shared_ptr<DiskFs>> OpenCheckpoint(DiskNo disk, std::string_view name) = 0;
  // Deletes a checkpoint; frees what only it referenced (when no branch was made from it).
  virtual Status DeleteCheckpoint(DiskNo disk, std::string_view name) = 0;

  // ---- sessions (docs/protocol.md §7, §8, formats.md §4.12) ----
  // Changes a random value at every open: the protocol's boot verifier. A client that sees it
  // change knows that what was not durable may be gone, and replays (protocol.md §8).
  virtual uint64_t boot_verifier() const = 0;
  // Records a session of `disk`, without a sync: it becomes durable with the next synced commit
  // (a session that no durable operation used may vanish in a crash, and that is harmless).
  virtual Status PutSession(DiskNo disk, const SessionIdBytes& id, const SessionRecord& record) = 0;
  // Deletes a session and its slots, without a sync. OK if there is none.
  virtual Status DeleteSession(DiskNo disk, const SessionIdBytes& id) = 0;
  // Every stored session of `disk` with its slots; sessions whose records do not decode are
  // skipped and logged (a client then finds its session unknown and creates a new one).
  virtual Result<std::vector<StoredSession>> Sessions(DiskNo disk) = 0;
  // An epilogue (engine/commit/commit_hooks.h) that writes slot `slot` of session `id` of `disk`,
  // made by `make` from the mutation's result, in the mutation's own batch.
  virtual CommitEpilogue SlotEpilogue(DiskNo disk, const SessionIdBytes& id, uint32_t slot,
                                      std::function<SlotRecord(const CommitResult&)> make) = 0;
};

}  // namespace archil::engine
