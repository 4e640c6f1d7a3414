// SlotTable: a session's slots and reply cache, the exactly-once rule of docs/protocol.md §7.
//
// Each mutating request carries (slot, seq). The client has at most one unanswered request per
// slot and numbers a slot's requests 1, 2, 3...; a retry (after a lost reply, a reconnect or a
// server restart) repeats the same pair. The table decides, per request:
//   seq == last + 1            new: execute it (the slot is busy until Finish)
//   seq == last, busy          a retry of the request still running: wait for its answer
//   seq == last, done          a retry of an answered request: send the cached reply again
//   seq >  last, restored slot the first use of a slot loaded from disk (the gap was state
//                              operations, whose replies were kept in memory only): new
//   anything else              SEQ_MISORDERED (nothing executed); slot >= slots: SLOT_INVALID
// A restored slot's reply is the one stored with its operation (engine/commit/commit_hooks.h), so a
// request the server applied before a crash is answered, never applied twice.
//
// Thread-safety: safe for concurrent use; Begin blocks while the same request runs elsewhere.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/mutex.h"
#include "proto/wire_status.h"

namespace archil::server {

// A reply as the cache keeps it: the status and the encoded reply body (no payload: READ, the
// only reply with one, is not mutating).
struct CachedReply {
  proto::WireStatus status = proto::WireStatus::kOk;
  std::string body;
  bool operator==(const CachedReply&) const = default;
};

enum class SlotVerdict {
  kExecute,     // new: run it, then Finish
  kReplay,      // answered before: send *cached with the REPLAYED flag
  kMisordered,  // SEQ_MISORDERED
  kInvalid,     // SLOT_INVALID
};

class SlotTable {
 public:
  explicit SlotTable(uint32_t slots);

  uint32_t size() const { return size_; }

  // A slot as stored at the last run (before any request of this run). Ignored if out of range.
  void Restore(uint32_t slot, uint64_t seq, CachedReply reply) ARCHIL_EXCLUDES(mu_);
  // The verdict for request (slot, seq); see above. A retry of a running request waits for it
  // and is then kReplay.
  SlotVerdict Begin(uint32_t slot, uint64_t seq, CachedReply* cached) ARCHIL_EXCLUDES(mu_);
  // The request Begin let run has its answer. REQUIRES: Begin(slot, seq) returned kExecute.
  void Finish(uint32_t slot, uint64_t seq, CachedReply reply) ARCHIL_EXCLUDES(mu_);
  // The last seq of every slot, by slot (SessionBindReply.slot_seq).
  std::vector<uint64_t> LastSeqs() const ARCHIL_EXCLUDES(mu_);

 private:
  struct Slot {
    uint64_t seq = 0;
    bool busy = false;
    bool restored = false;
    CachedReply reply;
  };
  const uint32_t size_;
  mutable Mutex mu_;
  CondVar done_{&mu_};
  std::vector<Slot> slots_ ARCHIL_GUARDED_BY(mu_);
};

}  // namespace archil::server
