// Reading a disk's keys through its levels (docs/formats.md §5.1, §5.3).
//
// A view of a disk is a level: its head, or one of its frozen epochs (a checkpoint). A key of
// inode X is found at the first level of the view's chain that has a version of it visible at
// that level's epoch: a VALUE is the answer, a WHITEOUT means "deleted here". A level that has
// nothing (NOT_HERE) passes the question down: to the level its ORIGIN record for X names, or,
// without one, to the first level of its read chain that changed or created X. The level that
// created X (its lineage index) ends the walk. A root disk's inodes are all its own, so a root's
// head read is exactly one Get.
//
// Keys are named independently of the disk (`LevelKey`): the head key of disk D is
// DiskPrefix(D) + rel, and its history suffix is rel (+ NUL after a name).
//
// Thread-safety: a Levels is immutable and may be shared; each call uses its reader alone.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "engine/lineage/lineage.h"
#include "engine/records/column_families.h"
#include "engine/records/envelope.h"
#include "engine/records/keys.h"

namespace archil::engine {

struct LevelKey {
  Cf cf = Cf::kInode;
  HistTag tag = HistTag::kInode;
  Ino owner;        // the inode whose key this is (a dentry's owner is its directory)
  std::string rel;  // the head key without its disk prefix
};
LevelKey InodeLevelKey(Ino ino);
LevelKey DentryLevelKey(Ino parent, uint64_t cookie, std::string_view name);
LevelKey XattrLevelKey(Ino ino, std::string_view name);
LevelKey ChunkLevelKey(Ino ino, uint64_t chunk);
std::string HeadKeyAt(DiskNo disk, const LevelKey& k);
std::string HistSuffixOf(const LevelKey& k);

// A version found at one level: its raw value (envelope included) and kind.
struct Found {
  ValueKind kind = ValueKind::kValue;
  std::string value;
};

// The version of `k` visible at level `at` (formats.md §5.1 ResolveAt), nullopt if NOT_HERE.
Result<std::optional<Found>> ResolveAt(KvReader& r, const Cfs& cfs, LevelRef at, const LevelKey& k);

class Levels {
 public:
  // REQUIRES: `lineages` knows `top.disk`; `cfs` and `lineages` outlive this.
  Levels(const Cfs* cfs, Lineages* lineages, LevelRef top, uint32_t top_lineage_index)
      : cfs_(cfs), lineages_(lineages), top_(top), top_index_(top_lineage_index) {}

  LevelRef top() const { return top_; }

  // The VALUE of `k` in this view (raw, envelope included), or nullopt if absent.
  Result<std::optional<std::string>> Get(KvReader& r, const LevelKey& k) const;
  // True if a level below the top has a VALUE of `k` (what a delete at the top must hide).
  Result<bool> BelowHas(KvReader& r, const LevelKey& k) const;
  // The next level below `at` that may hold keys of `ino`, or nullopt: the first level of `at`'s
  // read chain that created the inode or has an ORIGIN record for it (one that changed it). This
  // is also what `at`'s own ORIGIN record says, written when `at` first changed the inode; levels
  // below a head are frozen, so the answer is computed once per (disk, inode) and cached.
  Result<std::optional<LevelRef>> Below(KvReader& r, LevelRef at, Ino ino) const;
  // The walk below `disk`'s head that ignores its own ORIGIN record: what that record must say
  // when `disk` first changes the inherited `ino`.
  Result<std::optional<LevelRef>> WalkBelow(KvReader& r, DiskNo disk, Ino ino) const;
  // The levels that may hold keys of `ino`, from the top down.
  Result<std::vector<LevelRef>> Chain(KvReader& r, Ino ino) const;

 private:
  uint32_t IndexOf(DiskNo disk) const;
  const Cfs* cfs_;
  Lineages* lineages_;
  LevelRef top_;
  uint32_t top_index_;
};

// The entries of one owner's key range (a directory's dentries, an inode's xattrs or chunks)
// merged across the levels of `chain`, in key order, WHITEOUTs applied and removed: what the view
// holds. Usage: Seek, then while Valid(): rel(), value(), Next(); then status().
class LevelScan {
 public:
  // REQUIRES: `r` and `cfs` outlive the scan; rel_prefix = the owner's 8-byte ino.
  LevelScan(KvReader& r, const Cfs& cfs, const std::vector<LevelRef>& chain, Cf cf, HistTag tag,
            const std::string& rel_prefix);
  ~LevelScan();
  void Seek(std::string_view rel);  // the first entry whose rel >= `rel`
  bool Valid() const { return valid_; }
  std::string_view rel() const { return rel_; }
  std::string_view value() const { return value_; }  // raw VALUE, envelope included
  void Next();
  Status status() const { return status_; }

 private:
  class Cursor;
  void Settle();
  std::vector<std::unique_ptr<Cursor>> cursors_;
  bool valid_ = false;
  std::string rel_, value_;
  Status status_;
};

}  // namespace archil::engine
