#include "engine/fs/open_segment.h"

#include <algorithm>

namespace archil::engine {

std::optional<OpenSegment::Mark> OpenSegment::mark() const {
  MutexLock lock(&mu_);
  if (!open_) return std::nullopt;
  return Mark{seg_, written_, gen_};
}

std::optional<SegNo> OpenSegment::current(bool recorded_only) const {
  MutexLock lock(&mu_);
  if (!open_ || (recorded_only && !recorded_)) return std::nullopt;
  return seg_;
}

bool OpenSegment::holds(SegNo seg) const {
  MutexLock lock(&mu_);
  return HoldsLocked(seg);
}

OpenSegment::Room OpenSegment::RoomFor(uint32_t nblk, uint32_t segment_blocks) const {
  MutexLock lock(&mu_);
  return Room{open_, open_ && next_ + nblk > segment_blocks + 1, seg_};
}

OpenSegment::Usage OpenSegment::UsageOf(SegNo seg) const {
  MutexLock lock(&mu_);
  return Usage{HoldsLocked(seg), next_ - 1, live_};
}

OpenSegment::Saved OpenSegment::Save() const {
  MutexLock lock(&mu_);
  return Saved{open_, recorded_, seg_, next_, written_, live_};
}

void OpenSegment::Restore(const Saved& s) {
  MutexLock lock(&mu_);
  open_ = s.open;
  recorded_ = s.recorded;
  seg_ = s.seg;
  next_ = s.next;
  written_ = s.written;
  live_ = s.live;
  ++gen_;
}

void OpenSegment::Start(SegNo seg) {
  MutexLock lock(&mu_);
  open_ = true;
  recorded_ = false;
  seg_ = seg;
  next_ = written_ = 1;
  live_ = 0;
  ++gen_;
}

void OpenSegment::Rewind() {
  MutexLock lock(&mu_);
  next_ = written_ = 1;
  live_ = 0;
  ++gen_;
}

void OpenSegment::Close() {
  MutexLock lock(&mu_);
  open_ = false;
}

OpenSegment::Taken OpenSegment::Take(uint32_t nblk) {
  MutexLock lock(&mu_);
  Taken t{seg_, next_, recorded_};
  next_ += nblk;
  return t;
}

void OpenSegment::Recorded(SegNo seg) {
  MutexLock lock(&mu_);
  if (HoldsLocked(seg)) recorded_ = true;
}

void OpenSegment::Written(SegNo seg, uint32_t end) {
  MutexLock lock(&mu_);
  if (seg_ == seg) written_ = std::max(written_, end);
}

void OpenSegment::AddLive(SegNo seg, uint32_t nblk) {
  MutexLock lock(&mu_);
  if (HoldsLocked(seg)) live_ += nblk;
}

void OpenSegment::SubLive(SegNo seg, uint32_t nblk) {
  MutexLock lock(&mu_);
  if (HoldsLocked(seg)) live_ -= std::min(live_, nblk);
}

}  // namespace archil::engine
