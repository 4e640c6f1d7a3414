#include "cli/api_client.h"

namespace archil {

using nlohmann::json;

Status::Code CodeForHttpStatus(int s) {
  switch (s) {
    case 400:
      return Status::Code::kInvalidArgument;
    case 401:
      return Status::Code::kUnauthenticated;
    case 403:
      return Status::Code::kPermissionDenied;
    case 404:
      return Status::Code::kNotFound;
    case 409:
      return Status::Code::kAlreadyExists;
    case 413:
      return Status::Code::kTooLarge;
    case 502:
    case 503:
    case 504:
      return Status::Code::kUnavailable;
    default:
      return s >= 200 && s < 300 ? Status::Code::kOk : Status::Code::kInternal;
  }
}

Result<ApiReply> ApiClient::Call(const std::string& method, const std::string& target,
                                 const std::optional<json>& body) const {
  HttpRequest req;
  req.method = method;
  req.target = target;
  if (!api_key_.empty()) req.headers.emplace_back("Authorization", "Bearer " + api_key_);
  if (body) {
    req.headers.emplace_back("Content-Type", "application/json");
    req.body = body->dump(-1, ' ', false, json::error_handler_t::replace);
  }
  ARCHIL_ASSIGN_OR_RETURN(HttpResponse res, SendHttpRequest(url_, req, options_));
  json envelope = json::parse(res.body, nullptr, /*allow_exceptions=*/false);
  if (envelope.is_discarded() || !envelope.is_object() || !envelope.contains("success") ||
      !envelope["success"].is_boolean()) {
    return Status(CodeForHttpStatus(res.status) == Status::Code::kOk
                      ? Status::Code::kCorruption
                      : CodeForHttpStatus(res.status),
                  "unexpected answer from the server (HTTP " + std::to_string(res.status) +
                      "): is this an archil control plane?");
  }
  if (!envelope["success"].get<bool>()) {
    std::string message = envelope.contains("error") && envelope["error"].is_string()
                              ? envelope["error"].get<std::string>()
                              : "HTTP " + std::to_string(res.status);
    Status::Code code = CodeForHttpStatus(res.status);
    return Status(code == Status::Code::kOk ? Status::Code::kInternal : code, message);
  }
  ApiReply reply;
  reply.http_status = res.status;
  if (envelope.contains("data")) reply.data = envelope["data"];
  if (envelope.contains("nextCursor") && envelope["nextCursor"].is_string()) {
    reply.next_cursor = envelope["nextCursor"].get<std::string>();
  }
  return reply;
}

}  // namespace archil
