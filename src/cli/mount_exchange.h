// One request to a mount's daemon over its control socket (api/mount_control.h), from the CLI.
#pragma once

#include <string>

#include "base/status.h"

namespace archil {

// Sends `request` (one line) to the daemon listening on `path` and returns its reply line (at
// most kMaxControlReply bytes). Unavailable if nothing listens there or no reply comes within
// 60 s.
Result<std::string> ExchangeWithMount(const std::string& path, const std::string& request);

}  // namespace archil
