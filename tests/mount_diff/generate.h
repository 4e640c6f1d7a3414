// The differential test's ops, generated: the two sides they run on (Side, each with its table of
// open file slots) and Gen, which draws the next op from a seeded Rng.
//
// The namespace is small on purpose (5 names in each of 4 directories, some of which are also the
// directories' own names) so that creates collide, renames replace, and rmdir finds non-empty
// directories. Paths are relative to a side's root, and none resolves outside the run's own TOP,
// the root's parent (symlink targets have at most one "..").
//
// Contract: Gen's op is a function of the Rng's state, which slots of `ref` are open (and their
// flags), and what exists under `local`'s root (it lstats and listxattrs there, and changes
// nothing). So a seed replays the same sequence of ops as long as each op leaves the same state
// as in the run replayed; ops are drawn for the sides as they are, not written in advance.
#pragma once

#include <array>
#include <string>

#include "mount_diff/ops.h"

namespace archil::testing::mount_diff {

// An open file of a side: its descriptor (-1: none), the path it was opened by (relative to the
// side's root) and its open flags.
struct Slot {
  int fd = -1;
  std::string path;
  int flags = 0;
};

// One side of a lockstep run: the mount, or the local ext4 directory it is compared with.
struct Side {
  std::string name;  // "mount" or "ext4"
  std::string root;  // absolute
  bool mount = false;
  bool child = false;  // an as-user child: path operations only
  std::array<Slot, kSlots> slots;
  std::string P(const std::string& rel) const {
    return rel.empty() || rel == "." ? root : root + "/" + rel;
  }
};

// The next op, of a kind drawn by weight (an as-user op: of a path kind only, and Op::as set).
// Slots are chosen from `ref`'s (most of the time an open one), existing names from `local`'s
// tree.
Op Gen(Rng& r, const Side& ref, const Side& local);

}  // namespace archil::testing::mount_diff
