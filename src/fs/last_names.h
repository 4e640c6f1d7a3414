// LastNames: which inode a name of a directory names, as this mount last saw it, for names that
// are the only name of their inode (every directory's, a file's with one link): so that an unlink
// can say which inode goes with the name (FileSystem::UnlinkLast), and a file system may answer
// it before the disk has it (docs/semantics.md §0); and so that a removal can tell whether its
// victim is open here without asking the disk.
//
// The kernel's UNLINK names a directory and a name, not the inode. The mount saw the inode in the
// answer that gave the kernel its entry (a LOOKUP, a create, a READDIRPLUS), with its link count.
// On a mount that owns its disk, names change only through this mount, so an entry stays true
// until this mount removes or moves the name (Forget, Moved), or gives its inode another name (a
// LINK: Linking). Only a LINK raises a link count, so one seen as one stays one until then. An
// inode has at most one entry (the one name it has), so entries are found by inode too.
//
// Races: an answer is recorded (Saw) only if no Linking came between the start of the request
// that got it (Generation, read before sending) and the recording. A LINK calls Linking both
// before it is sent and after it is answered, so an answer that could predate the LINK is never
// kept past it.
//
// Bounded: past `max_names` entries, every entry is forgotten.
//
// Thread-safety: safe for concurrent use.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "base/mutex.h"
#include "posix/types.h"

namespace archil::fs {

class LastNames {
 public:
  static constexpr size_t kDefaultMaxNames = size_t{1} << 17;  // about 10 MB at most

  explicit LastNames(size_t max_names = kDefaultMaxNames) : max_names_(max_names) {}

  // Read before sending a request whose answer may be recorded.
  uint64_t Generation() const ARCHIL_EXCLUDES(mu_);
  // `name` in `dir` names `attr.ino`, as an answer to a request begun at `generation` said: kept
  // if it is the inode's only name (a directory, or a link count of one); else what was kept is
  // forgotten.
  void Saw(posix::Ino dir, std::string_view name, const posix::Attr& attr, uint64_t generation)
      ARCHIL_EXCLUDES(mu_);
  // `name` was (or may have been) removed from `dir`, or replaced.
  void Forget(posix::Ino dir, std::string_view name) ARCHIL_EXCLUDES(mu_);
  // `name` of `dir` was renamed to `new_name` of `new_dir` (replacing what that named).
  void Moved(posix::Ino dir, std::string_view name, posix::Ino new_dir, std::string_view new_name)
      ARCHIL_EXCLUDES(mu_);
  // `ino` gains a name: its entry is forgotten, and so is every answer begun before.
  void Linking(posix::Ino ino) ARCHIL_EXCLUDES(mu_);

  struct Named {
    posix::Ino ino;
    bool dir = false;
    bool operator==(const Named&) const = default;
  };
  // The inode `name` of `dir` names, if it is kept (its only name).
  std::optional<Named> Find(posix::Ino dir, std::string_view name) const ARCHIL_EXCLUDES(mu_);

  size_t size() const ARCHIL_EXCLUDES(mu_);

 private:
  const size_t max_names_;
  mutable Mutex mu_;
  // Removes the entry of `key`, if any, from both maps.
  void Erase(const std::string& key) ARCHIL_REQUIRES(mu_);

  std::unordered_map<std::string, Named> names_ ARCHIL_GUARDED_BY(mu_);  // posix::NameKey -> inode
  std::unordered_map<uint64_t, std::string> keys_
      ARCHIL_GUARDED_BY(mu_);  // inode -> posix::NameKey
  uint64_t generation_ ARCHIL_GUARDED_BY(mu_) = 0;
};

}  // namespace archil::fs
