// ApiRouter: the control plane's HTTP API (docs/api.md) as a pure function from a
// request to a response, so it is testable without sockets. http_server.h feeds it real requests.
//
// Every response body is the envelope {"success": true, "data": ...[, "nextCursor": ...]} or
// {"success": false, "error": "...", "code": "..."}; status codes come from HttpStatusFor().
//
// Thread-safety: Handle() may run concurrently.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "control/body_stream.h"
#include "control/service.h"
#include "metrics/registry.h"

namespace archil {

struct ApiRequest {
  std::string method;  // "GET", "POST", ...
  std::string path;    // percent-decoded, without the query
  std::multimap<std::string, std::string> query;
  std::string authorization;    // the Authorization header, empty if absent
  std::string idempotency_key;  // the Idempotency-Key header, empty if absent
  std::string range;            // the Range header, empty if absent (used by share links only)
  std::string host;             // the Host header, empty if absent (share links' URLs)
  std::string scheme = "http";  // "https" on a TLS connection
  // The client's address ("" if unknown): a disk token makes share links only from an address
  // the disk's allowed client addresses cover, as it mounts only from one.
  std::string peer;
  std::string body;
};

struct ApiResponse {
  int status = 200;
  std::string body;  // JSON, unless `stream` is set
  std::string content_type = "application/json";
  std::vector<std::pair<std::string, std::string>> headers;  // more headers (Content-Range)
  // Set: the body is `content_length` bytes read from here as they are sent (a share link's
  // file), and `body` is unused.
  std::shared_ptr<BodyStream> stream;
  uint64_t content_length = 0;
};

class ApiRouter {
 public:
  // Fills `detail` with what /api/health says of a part of the server (the tier); an error makes
  // the answer 503 with its message.
  using HealthPart = std::function<Status(nlohmann::json* detail)>;
  // Fills `detail` with what a part of the server says of one disk (the tier: what of it waits
  // for the bucket), added to GET /api/disks/{id} under the part's name; left empty, nothing is
  // added.
  using DiskPart = std::function<void(const DiskId& disk, nlohmann::json* detail)>;

  explicit ApiRouter(ControlService* service) : service_(service) {}
  ApiResponse Handle(const ApiRequest& request) const;
  // True when Handle(request) commits nothing and waits on nothing (health, the region, the lists
  // of disks and of API keys, which read the catalog's reader connection): the HTTP server
  // answers it on the connection's I/O thread instead of handing it to a handler thread.
  // Everything else (commits, other reads, grep, any route added later) runs on the handler pool.
  static bool AnswersInline(const ApiRequest& request);
  // REQUIRES: before the first Handle.
  void AddHealthPart(std::string name, HealthPart part) {
    health_parts_.emplace_back(std::move(name), std::move(part));
  }
  // REQUIRES: before the first Handle.
  void AddDiskPart(std::string name, DiskPart part) {
    disk_parts_.emplace_back(std::move(name), std::move(part));
  }
  // The disk server's "host:port", answered by GET /api/region (a wildcard host means: the host
  // the client reached the API at). REQUIRES: before the first Handle.
  void SetMountAddress(std::string address) { mount_address_ = std::move(address); }
  // Counts requests in `registry` (archil_api_* in docs/operations.md). REQUIRES: before the
  // first Handle; `registry` outlives the router.
  void SetMetrics(metrics::Registry* registry);

 private:
  ControlService* const service_;
  std::vector<std::pair<std::string, HealthPart>> health_parts_;
  std::vector<std::pair<std::string, DiskPart>> disk_parts_;
  std::string mount_address_;
  metrics::CounterFamily* requests_ = nullptr;
  metrics::HistogramFamily* seconds_ = nullptr;
};

// The route of `path` for a metric's label: ids and names replaced ("/api/disks/{id}/users"),
// "other" for what no route matches (so a scanner cannot grow the label set).
std::string RouteLabel(std::string_view path);

// `path` as a log may show it: a share link's token (a credential) replaced by "{token}".
std::string LoggablePath(std::string_view path);

// The envelope for an error that happened outside the router (413 from the HTTP layer, ...).
ApiResponse ErrorResponse(const Status& status);
// As above, with an explicit HTTP status for errors that have no Status code (405).
ApiResponse ErrorResponse(int http_status, std::string_view code, std::string_view message);

}  // namespace archil
