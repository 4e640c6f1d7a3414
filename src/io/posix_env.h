// PosixEnv: the Env over the real file system (open/pread/pwrite/fdatasync/fsync/renameat/linkat/
// fallocate). EINTR is retried, short reads and writes are looped, every descriptor is O_CLOEXEC.
// Durability is whatever the kernel and file system give (see env.h for what callers may assume).
//
// Thread-safety: the returned Env is safe to use from many threads and lives forever.
#pragma once

#include "io/env.h"

namespace archil::io {

// The process-wide PosixEnv. Never deleted.
Env* PosixEnv();

}  // namespace archil::io
