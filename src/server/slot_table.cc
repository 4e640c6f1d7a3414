#include "server/slot_table.h"

#include <utility>

namespace archil::server {

SlotTable::SlotTable(uint32_t slots) : size_(slots), slots_(slots) {}

void SlotTable::Restore(uint32_t slot, uint64_t seq, CachedReply reply) {
  MutexLock lock(&mu_);
  if (slot >= slots_.size()) return;
  slots_[slot] = Slot{seq, false, true, std::move(reply)};
}

SlotVerdict SlotTable::Begin(uint32_t slot, uint64_t seq, CachedReply* cached) {
  MutexLock lock(&mu_);
  if (slot >= slots_.size()) return SlotVerdict::kInvalid;
  while (true) {
    Slot& s = slots_[slot];
    if (seq == s.seq + 1 || (s.restored && seq > s.seq)) {
      if (s.busy) return SlotVerdict::kMisordered;  // the client has two requests in one slot
      s = Slot{seq, true, false, {}};
      return SlotVerdict::kExecute;
    }
    if (seq != s.seq || seq == 0) return SlotVerdict::kMisordered;
    if (!s.busy) {
      *cached = s.reply;
      return SlotVerdict::kReplay;
    }
    done_.Wait(&mu_);  // a retry of the request still running: its answer is this one's
  }
}

void SlotTable::Finish(uint32_t slot, uint64_t seq, CachedReply reply) {
  MutexLock lock(&mu_);
  Slot& s = slots_[slot];
  if (s.seq != seq) return;
  s.busy = false;
  s.reply = std::move(reply);
  done_.SignalAll();
}

std::vector<uint64_t> SlotTable::LastSeqs() const {
  MutexLock lock(&mu_);
  std::vector<uint64_t> out;
  out.reserve(slots_.size());
  for (const Slot& s : slots_) out.push_back(s.seq);
  return out;
}

}  // namespace archil::server
