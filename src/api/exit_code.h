// The one mapping from Status to process exit codes (the edge of both binaries), and the one-line
// message that goes with it: what went wrong, then what to do.
#pragma once

#include <string>

#include "base/status.h"

namespace archil {

// 0 ok, 1 other failure, 2 bad usage or input, 3 not authenticated or not allowed, 4 not found,
// 5 conflict, 6 server unreachable or unavailable.
int ExitCodeFor(Status::Code code);

// "archil: <message>" plus a hint for codes with a usual fix.
std::string ErrorLine(const Status& status);

}  // namespace archil
