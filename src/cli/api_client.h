// ApiClient: calls the control-plane API and unwraps its envelope.
//
// A success returns the envelope's `data` (and `nextCursor`); an error envelope becomes a Status
// whose code follows the HTTP status and whose message is the server's. Anything else the server
// says (no JSON, no envelope) is Corruption, never a crash. The calls of one client (and of its
// copies) go one after another on one kept-alive connection (HttpSession): a command that makes
// several pays one TCP and TLS handshake.
//
// Thread-safety: safe for concurrent use (calls are serialized).
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "api/endpoints.h"
#include "base/mutex.h"
#include "base/status.h"
#include "http/http_client.h"

namespace archil {

struct ApiReply {
  int http_status = 0;
  nlohmann::json data;
  std::string next_cursor;  // empty on the last page
};

class ApiClient {
 public:
  ApiClient(Url url, std::string api_key, HttpClientOptions options)
      : api_key_(std::move(api_key)),
        session_(std::make_shared<Session>(std::move(url), std::move(options))) {}

  // `target` is the path and query ("/api/disks?limit=10"); `body` is sent as JSON if given.
  Result<ApiReply> Call(const std::string& method, const std::string& target,
                        const std::optional<nlohmann::json>& body = std::nullopt,
                        const std::vector<std::pair<std::string, std::string>>& headers = {}) const;

 private:
  struct Session {
    Session(Url url, HttpClientOptions options) : http(std::move(url), std::move(options)) {}
    Mutex mu;
    HttpSession http ARCHIL_GUARDED_BY(mu);
  };
  std::string api_key_;
  std::shared_ptr<Session> session_;
};

// Decodes a response (status and body) as Call() does: the envelope's data on success; on
// failure the server's message with the code its HTTP status stands for; Corruption for anything
// that is not an envelope or contradicts its status.
Result<ApiReply> DecodeApiReply(int http_status, std::string_view body);

// The Status code for an HTTP error status (the client side's one mapping).
Status::Code CodeForHttpStatus(int http_status);

}  // namespace archil
