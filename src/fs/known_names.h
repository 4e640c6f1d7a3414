// KnownNames: the names of the directories this mount created, so that a lookup of a name that
// is not there is answered without a request (docs/semantics.md §5.10).
//
// A directory this mount made with MKDIR starts empty, and on a mount that owns its disk every
// later change of its names goes through this mount. For such a directory the kernel's LOOKUP of
// a new name (it sends one before every create: open(O_CREAT), mkdir, symlink, rename's target)
// can be answered ENOENT locally: unpacking an archive or checking out a tree into a new
// directory saves one round trip per file.
//
// The contract keeps a superset: for a known directory, every name that exists on the disk is in
// its set. So a name is added *before* the request that may create it is sent (Adding), and
// removed only *after* the request that removed it was answered, and only if no request that
// may add it again is in flight (Removed). A request that fails leaves its name in the set: a
// name in the set only means "ask the disk".
//
// Bounded: past `max_names` names in all, every directory is forgotten (each lookup in them asks
// the disk again); a directory is known only from its creation, so a forgotten one stays so.
//
// Thread-safety: safe for concurrent use.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>

#include "base/mutex.h"
#include "posix/types.h"

namespace archil::fs {

class KnownNames {
 public:
  static constexpr size_t kDefaultMaxNames = size_t{1} << 18;  // about 20 MB at most

  explicit KnownNames(size_t max_names = kDefaultMaxNames) : max_names_(max_names) {}

  // `dir` was just created by this mount: empty, and only this mount changes it.
  void Created(posix::Ino dir) ARCHIL_EXCLUDES(mu_);
  // Before a request that may add `name` to `dir`; each call is paired with one Added after the
  // request was answered, whatever the answer. Returns whether `name` was certainly absent from
  // `dir` before (as Absent, in the same step).
  bool Adding(posix::Ino dir, std::string_view name) ARCHIL_EXCLUDES(mu_);
  void Added(posix::Ino dir, std::string_view name) ARCHIL_EXCLUDES(mu_);
  // After a request that removed `name` from `dir` was answered OK.
  void Removed(posix::Ino dir, std::string_view name) ARCHIL_EXCLUDES(mu_);

  // True iff `dir` is known and `name` is certainly not in it.
  bool Absent(posix::Ino dir, std::string_view name) const ARCHIL_EXCLUDES(mu_);
  // True iff `dir` is known and certainly empty (no name in it, none being added).
  bool Empty(posix::Ino dir) const ARCHIL_EXCLUDES(mu_);

  size_t dirs() const ARCHIL_EXCLUDES(mu_);
  size_t names() const ARCHIL_EXCLUDES(mu_);

 private:
  // name -> requests in flight that may add it
  using Names = std::unordered_map<std::string, uint32_t>;

  const size_t max_names_;
  mutable Mutex mu_;
  std::unordered_map<uint64_t, Names> dirs_ ARCHIL_GUARDED_BY(mu_);
  size_t names_ ARCHIL_GUARDED_BY(mu_) = 0;
};

// Adding on construction, Added on destruction.
class AddingName {
 public:
  AddingName(KnownNames* known, posix::Ino dir, std::string_view name)
      : known_(known), dir_(dir), name_(name), absent_(known_->Adding(dir_, name_)) {}
  ~AddingName() { known_->Added(dir_, name_); }
  // Whether the name was certainly absent when this began (KnownNames::Adding).
  bool absent() const { return absent_; }
  AddingName(const AddingName&) = delete;
  AddingName& operator=(const AddingName&) = delete;

 private:
  KnownNames* const known_;
  const posix::Ino dir_;
  const std::string_view name_;
  const bool absent_;
};

}  // namespace archil::fs
