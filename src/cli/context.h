// What every CLI command shares: the global flags, and how to reach the control plane.
#pragma once

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
  // Set by the command that ran; main() turns it into the exit code.
  Status result;

  // Resolves the region's endpoint and the API key (SPEC.md "Region resolution").
  Result<ApiClient> Api() const;
};

}  // namespace archil
