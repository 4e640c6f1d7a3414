// ListingEnds: where the disk said a directory's listing ends, so that the kernel's next READDIR
// of it, which asks past the last entry and expects nothing, is answered without a request.
//
// The kernel reads a directory until a READDIR returns no entry; the disk's answer to the one
// before already said the listing ended there (posix::DirPage::eof). On a mount that owns its
// disk the names change only through this mount, so that answer stays true until a change of
// names. The contract:
//  - an end is recorded only if no change of names (in any directory) began or ended while its
//    READDIR was in flight: Changes() is read before the request, and Ended drops the end if it
//    moved;
//  - it answers one READDIR (TakeEnd forgets it), at exactly that offset, and only if no change of
//    names began or ended since it was recorded.
// A change of names calls Changing() before it is sent and after it is answered.
//
// Bounded: past max_dirs ends, all are forgotten.
//
// Thread-safety: safe for concurrent use.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <unordered_map>

#include "base/mutex.h"
#include "posix/types.h"

namespace archil::fs {

class ListingEnds {
 public:
  static constexpr size_t kDefaultMaxDirs = size_t{1} << 12;

  explicit ListingEnds(size_t max_dirs = kDefaultMaxDirs) : max_dirs_(max_dirs) {}

  // The count of changes of names begun or ended so far.
  uint64_t Changes() const { return changes_.load(std::memory_order_acquire); }
  // Before a change of names is sent, and after it is answered.
  void Changing() { changes_.fetch_add(1, std::memory_order_acq_rel); }
  // The disk said the listing of `dir` ends after the entry at `offset`, answering a READDIR
  // begun when Changes() was `changes`.
  void Ended(posix::Ino dir, uint64_t offset, uint64_t changes) ARCHIL_EXCLUDES(mu_);
  // True if a READDIR of `dir` at `offset` is past the end of its listing, as recorded with no
  // change of names since; the end is then forgotten.
  bool TakeEnd(posix::Ino dir, uint64_t offset) ARCHIL_EXCLUDES(mu_);

 private:
  struct End {
    uint64_t offset = 0;
    uint64_t changes = 0;
  };
  const size_t max_dirs_;
  std::atomic<uint64_t> changes_{0};
  Mutex mu_;
  std::unordered_map<uint64_t, End> ends_ ARCHIL_GUARDED_BY(mu_);
};

// Changing() on construction and on destruction: around one change of names.
class ChangingNames {
 public:
  explicit ChangingNames(ListingEnds* ends) : ends_(ends) { ends_->Changing(); }
  ~ChangingNames() { ends_->Changing(); }
  ChangingNames(const ChangingNames&) = delete;
  ChangingNames& operator=(const ChangingNames&) = delete;

 private:
  ListingEnds* const ends_;
};

}  // namespace archil::fs
