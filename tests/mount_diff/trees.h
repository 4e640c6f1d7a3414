// The two trees of a run compared, the mount's and ext4's, entry by entry; and the blocks ops
// touched, which that comparison samples in the holes of huge files.
//
// Contract: CompareTrees reads both trees and changes nothing. Every entry must have the same
// StatText (kAllowed: ino_dev, st_blocks, st_blksize, dir_size, times), the same names as hard
// links of each other, symlink target, user xattrs and values, directory listing, and contents:
// every byte up to 64 MiB; beyond, ext4's data extents byte for byte and zeros on the mount at
// samples of ext4's holes and at every block in `touched`.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "mount_diff/ops.h"

namespace archil::testing::mount_diff {

// The names in `dir` but "." and "..", sorted; none if it cannot be opened, and then `*err` says
// why.
std::vector<std::string> Names(const std::string& dir, std::string* err);

// The block offsets an op may have touched (for sampling holes of huge files at the end).
void NoteTouched(const Op& op, std::set<uint64_t>* touched);

// Compares the trees under `a` (the mount) and `b` (ext4), the roots included: the first
// difference, or none (then it prints "  trees equal: N entries").
std::optional<std::string> CompareTrees(const std::string& a, const std::string& b,
                                        const std::set<uint64_t>& touched);

}  // namespace archil::testing::mount_diff
