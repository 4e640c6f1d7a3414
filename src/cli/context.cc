#include "cli/context.h"

#include <cstdlib>

#include "api/endpoints.h"

namespace archil {
namespace {

std::string FirstNonEmpty(const std::string& flag, const char* env) {
  if (!flag.empty()) return flag;
  const char* v = std::getenv(env);
  return v ? v : "";
}

Result<Endpoints> Resolve(const GlobalOptions& options) {
  ResolveOptions r = ResolveOptionsFromEnv();
  if (!options.endpoint.empty()) r.endpoint = options.endpoint;
  if (!options.region.empty()) r.region = options.region;
  return ResolveEndpoints(r);
}

}  // namespace

bool CliContext::HasApiKey() const {
  return !FirstNonEmpty(options.api_key, "ARCHIL_API_KEY").empty();
}

Result<ApiClient> CliContext::ApiWith(std::string credential) const {
  ARCHIL_ASSIGN_OR_RETURN(Endpoints e, Resolve(options));
  ARCHIL_ASSIGN_OR_RETURN(Url url, ParseUrl(e.api_url));
  HttpClientOptions http;
  http.ca_file = FirstNonEmpty(options.ca_file, "ARCHIL_CA_FILE");
  return ApiClient(std::move(url), std::move(credential), http);
}

Result<ApiClient> CliContext::Api() const {
  ARCHIL_ASSIGN_OR_RETURN(Endpoints e, Resolve(options));
  ARCHIL_ASSIGN_OR_RETURN(Url url, ParseUrl(e.api_url));

  std::string key = FirstNonEmpty(options.api_key, "ARCHIL_API_KEY");
  std::string why;
  if (key.empty() && !e.admin_key_file.empty()) {
    Result<std::string> admin = ReadAdminKeyFile(e.admin_key_file);  // private: 0600, root's
    if (admin.ok()) {
      key = *admin;
    } else if (admin.status().code() == Status::Code::kPermissionDenied) {
      why = " (the local server's admin key is not used: " + admin.status().message() + ")";
    }
  }
  if (key.empty()) {
    return Status::Unauthenticated("no API key for " + e.api_url + why);
  }
  HttpClientOptions http;
  http.ca_file = FirstNonEmpty(options.ca_file, "ARCHIL_CA_FILE");
  return ApiClient(std::move(url), key, http);
}

}  // namespace archil
