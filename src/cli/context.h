// What every CLI command shares: the global flags, and how to reach the control plane.
#pragma once

#include <functional>
#include <string>

#include "base/status.h"
#include "cli/api_client.h"

namespace archil {

struct GlobalOptions {
  std::string endpoint;  // --endpoint, else ARCHIL_ENDPOINT
  std::string region;    // --region, else ARCHIL_REGION
  std::string api_key;   // --api-key, else ARCHIL_API_KEY, else a local server's admin key file
  std::string ca_file;   // --ca-file, else ARCHIL_CA_FILE
  std::string log_level = "warn";
  bool json = false;
  bool quiet = false;
  bool verbose = false;
};

class CliContext {
 public:
  GlobalOptions options;
  // Set by the chosen subcommand while the command line is parsed; run only once parsing and the
  // global flags (log level) are settled, so a bad global flag stops the command before it acts.
  std::function<Status()> action;

  // Resolves the region's endpoint and the API key (api/endpoints.h).
  Result<ApiClient> Api() const;
  // Whether an API key is given: --api-key or ARCHIL_API_KEY (not a local server's admin key).
  bool HasApiKey() const;
  // The region's endpoint, called with `credential` (a disk token: `archil share`).
  Result<ApiClient> ApiWith(std::string credential) const;
};

}  // namespace archil
