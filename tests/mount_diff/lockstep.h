// A lockstep run: one seeded sequence of generated ops, each applied to the mount and then to
// ext4, the two results compared, and the first difference reported with the ops before it. And
// Prepare, the starting subtree every run acts on.
//
// Contract: a run's ops depend on its seed and on the sides' state only (Gen), so a test's seed
// replays its runs. Besides the ops, a run changes a side only where kAllowed says so, each use
// counted by Allowed: killpriv_root (where the mount dropped a file's set-ID bits, ext4's file is
// given the mount's mode) and odirect_short_read (the mount's short read is taken as ext4's). A
// Lockstep owns its slots' descriptors on both sides and closes those still open when destroyed.
// With ARCHIL_DIFF_TRACE set, every op is printed to stderr. Not thread-safe.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <cstdint>
#include <cstdlib>
#include <deque>
#include <optional>
#include <set>
#include <string>

#include "mount_diff/apply.h"
#include "mount_diff/generate.h"
#include "mount_diff/ops.h"

namespace archil::testing::mount_diff {

// The starting subtree `top`/r on one side (`top` made too, the run's TOP): a few files and
// directories with several owners and modes, a sticky directory, a symlink, a hard link, an
// xattr. What fails is a gtest failure (ADD_FAILURE).
void Prepare(const std::string& top);

// One run on a side's TOP/r on the mount (a) and on ext4 (b), both Prepare'd.
class Lockstep {
 public:
  // `replay_seed`: the test's seed, which failures print (the run's own seed derives from it).
  // The ops run in TOP/r; TOP is the run's own, because a symlink in r to "../x" lets an
  // O_CREAT create TOP/x.
  Lockstep(uint64_t replay_seed, uint64_t seed, std::string label, std::string mount_top,
           std::string local_top, bool a_is_mount = true);
  // Closes the slots still open (CloseAll), whatever their results.
  ~Lockstep();
  Lockstep(const Lockstep&) = delete;
  Lockstep& operator=(const Lockstep&) = delete;

  // Runs `n` more ops; the first mismatch, if any.
  std::optional<std::string> Run(int n);

  // kAllowed killpriv_root, at the end of a run: the ext4 files whose set-ID bits the mount
  // dropped get the mount's mode, so the trees compare exactly. REQUIRES: CloseAll() (every
  // dirty page written back).
  void ReconcileTrees();

  // Closes every open slot on both sides; the first close whose results differ, if any.
  std::optional<std::string> CloseAll();

  // "N succeeded; kind=ok/run ..." for the ops run so far, as-user ops counted as "as-user".
  std::string Counts() const;
  // The blocks the ops may have touched (NoteTouched), for CompareTrees.
  const std::set<uint64_t>& touched() const { return touched_; }

 private:
  // The ext4 inode behind a slot, or 0.
  ino_t SlotIno(int slot) const;

  // Records the ext4 inodes root wrote data to (kAllowed: killpriv_root).
  void NoteRootWrite(const Op& op);

  // kAllowed killpriv_root, as it happens: after root wrote to, or chmodded, a file with set-ID
  // bits, the mount's copy is written back (fsync) and its mode fetched from the daemon; if the
  // server dropped the bits, ext4's file gets the same mode, so later ops (a non-owner's chown,
  // which may clear S_ISGID only where it is set) see the same state on both sides.
  void SettleSetidBits(const Op& op);

  // Whether a mount mode `ma` is ext4's `mb` with what a write clears cleared.
  bool KilledBits(const struct stat& sb, mode_t ma) const;

  // The mode in a StatText, or 0.
  static mode_t ModeIn(const std::string& text);

  // kAllowed: odirect_short_read: an O_DIRECT|O_SYNC read the mount ended early (at the
  // server's size) where ext4 read on through zeros (to the kernel's size). The mount's result
  // becomes ext4's, and read()'s position follows.
  void ReconcileShortDirectRead(const Op& op, Outcome* oa, const Outcome& ob);

  // A stat that differs only by the set-ID bits the mount dropped at root's write: ext4's file
  // gets the same mode, and the results are then equal.
  void ReconcileKilledBits(const Op& op, const Outcome& oa, Outcome* ob);

  // KilledBits on each regular file of the two trees, `pa` on the mount and `pb` on ext4.
  void ReconcileTree(const std::string& pa, const std::string& pb);

  const uint64_t seed_;  // the test's, which failures print
  const std::string label_;
  Rng rng_;
  const std::string top_a_, top_b_;
  Side a_, b_;
  std::set<ino_t> root_written_;  // ext4 inodes root wrote data to
  std::set<uint64_t> touched_;
  std::deque<std::string> recent_;
  int counts_[kKinds] = {};  // ops run, by kind
  int ok_[kKinds] = {};      // of which succeeded
  int succeeded_ = 0;
  int next_ = 0;                                                    // the next op's index
  const bool trace_ = std::getenv("ARCHIL_DIFF_TRACE") != nullptr;  // every op to stderr
};

}  // namespace archil::testing::mount_diff
