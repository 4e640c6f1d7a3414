// The one-line message both binaries print on failure: what went wrong, then what to do. The exit
// code itself is ExitCodeFor() (base/status.h), from the one table of codes.
#pragma once

#include <string>

#include "base/status.h"

namespace archil {

// "archil: <message>" plus a hint for codes with a usual fix.
std::string ErrorLine(const Status& status);

}  // namespace archil
