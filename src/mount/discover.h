// Finding a region's disk server from its API address alone (ARCHIL_ENDPOINT or --endpoint with
// no regions file): the API answers GET /api/region with {"region": ..., "mount": "host:port"}.
//
// Thread-safety: a free function; no shared state.
#pragma once

#include <string>

#include "base/status.h"

namespace archil {

// The disk server's "host:port" as the API at `api_url` advertises it. A wildcard host (0.0.0.0,
// ::) becomes the host `api_url` names: the server listens everywhere, and the client reached it
// there. Unavailable if the API does not answer within `timeout_ms` (naming it), NotFound if it
// advertises no disk server, Corruption if its answer is not what the API documents.
// `ca_file`: a PEM bundle to trust instead of the system store ("" for the system store).
Result<std::string> DiscoverMountAddress(const std::string& api_url, const std::string& ca_file,
                                         int timeout_ms);

// The address in `advertised` ("host:port", "[v6]:port") with a wildcard host replaced by
// `api_host` (an IPv6 host gets brackets). Exposed for tests.
Result<std::string> ResolveAdvertisedMount(const std::string& advertised,
                                           const std::string& api_host);

}  // namespace archil
