// The one mapping from Status to HTTP status codes (the control plane's edge).
#pragma once

#include "base/status.h"

namespace archil {

// 400 invalid input, 401 no or bad credential, 403 not allowed, 404 unknown, 409 conflict,
// 413 too large, 503 unavailable, 500 for everything that is our fault.
int HttpStatusFor(Status::Code code);

}  // namespace archil
