// A local server's advertisement: <run dir>/<region>.json, which local CLIs read to find it
// (api/endpoints.h has the format and the reader).
//
// Thread-safety: free functions over the file system.
#pragma once

#include <sys/types.h>

#include <string>

#include "api/endpoints.h"
#include "base/status.h"
#include "io/env.h"

namespace archil {

// Creates `run_dir` if needed (0755) and atomically replaces the advertisement of
// `endpoints.region` with this process's (mode 0644).
Status WriteAdvertisement(io::Env* env, const std::string& run_dir, const Endpoints& endpoints,
                          pid_t pid);

}  // namespace archil
