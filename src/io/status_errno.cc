#include "io/status_errno.h"

namespace archil::io {

int ErrnoOf(const Status& s) { return ErrnoFor(s); }

}  // namespace archil::io
