#include "mount/discover.h"

#include <nlohmann/json.hpp>

#include "base/strings.h"
#include "http/http_client.h"

namespace archil {

Result<std::string> ResolveAdvertisedMount(const std::string& advertised,
                                           const std::string& api_host) {
  const size_t colon = advertised.rfind(':');
  if (colon == std::string::npos || colon + 1 == advertised.size()) {
    return Status::Corruption("the API advertises the disk server as '" + advertised +
                              "', not host:port");
  }
  std::string host = advertised.substr(0, colon);
  const std::string port = advertised.substr(colon + 1);
  const std::optional<uint64_t> number = ParseUint64(port);
  if (!number || *number == 0 || *number > 65535) {
    return Status::Corruption("the API advertises the disk server on port '" + port + "'");
  }
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  if (host.empty() || host == "0.0.0.0" || host == "::") host = api_host;
  if (host.find(':') != std::string::npos) host = "[" + host + "]";
  return host + ":" + port;
}

Result<std::string> DiscoverMountAddress(const std::string& api_url, const std::string& ca_file,
                                         int timeout_ms) {
  ARCHIL_ASSIGN_OR_RETURN(Url url, ParseUrl(api_url));
  HttpRequest request;
  request.target = url.base_path + "/api/region";
  request.headers.emplace_back("Accept", "application/json");
  HttpClientOptions options;
  options.timeout_ms = timeout_ms;
  options.ca_file = ca_file;
  options.max_response_bytes = 64 << 10;
  Result<HttpResponse> r = SendHttpRequest(url, request, options);
  if (!r.ok()) {
    return r.status().WithContext("ask the API at " + api_url + " where its disk server is");
  }
  if (r->status == 404) {
    return Status::NotFound("the API at " + api_url +
                            " does not say where its disk server is (GET /api/region: 404; an "
                            "older server): list the region with its \"mount\" address in the "
                            "regions file");
  }
  if (r->status != 200) {
    return Status::Unavailable("the API at " + api_url + " answered GET /api/region with HTTP " +
                               std::to_string(r->status));
  }
  // The API's envelope: {"success": true, "data": {"region": ..., "mount": ...}} (docs/api.md).
  const nlohmann::json j = nlohmann::json::parse(r->body, nullptr, /*allow_exceptions=*/false);
  auto data = j.is_object() ? j.find("data") : j.end();
  if (!j.is_object() || data == j.end() || !data->is_object()) {
    return Status::Corruption("the API at " + api_url +
                              " answered GET /api/region without the documented JSON object");
  }
  auto mount = data->find("mount");
  if (mount == data->end()) {
    return Status::NotFound("the API at " + api_url + " advertises no disk server to mount from");
  }
  if (!mount->is_string()) {
    return Status::Corruption("the API at " + api_url + ": \"mount\" is not a string");
  }
  return ResolveAdvertisedMount(mount->get<std::string>(), url.host);
}

}  // namespace archil
