// The errno behind an io Status.
//
// Env implementations report system-call failures with Status::FromErrno(errno, what). Callers
// that must tell ENOSPC from ENOENT from EIO (the RocksDB adapter, retry logic) ask ErrnoOf.
//
// Thread-safety: pure functions.
#pragma once

#include "base/status.h"

namespace archil::io {

// The errno `s` was built from with Status::FromErrno (kept in the Status); for other errors the
// default errno of its code (base/status.h ErrnoFor); 0 for OK.
int ErrnoOf(const Status& s);

}  // namespace archil::io
