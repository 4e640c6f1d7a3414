// Replacing a small file so that a crash leaves either the old or the new contents.
//
// Thread-safety: as the Env; concurrent calls on the same path leave one of the contents.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "io/env.h"

namespace archil::io {

// Makes `path` hold exactly `contents`, durably and atomically: writes `path`.tmp-<random hex>,
// syncs it, renames it over `path`, syncs the parent directory. On OK the new contents survive a
// power loss. On error, or at a power loss at any point, `path` holds either its complete old
// contents (or is absent if it was absent) or the complete new contents, and the temporary file is
// removed when the error still lets us (a crash can leave one behind; it is never durable, as it
// is created and renamed within one un-synced directory epoch, unless the final SyncDir ran).
// REQUIRES: the parent directory of `path` exists.
Status WriteFileAtomically(Env* env, const std::string& path, std::string_view contents,
                           uint32_t mode = 0644);

}  // namespace archil::io
