#include "cli/api_client.h"

#include "api/wire.h"

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

Result<ApiReply> ApiClient::Call(
    const std::string& method, const std::string& target, const std::optional<json>& body,
    const std::vector<std::pair<std::string, std::string>>& headers) const {
  HttpRequest req;
  req.method = method;
  req.target = target;
  req.headers = headers;
  if (!api_key_.empty()) req.headers.emplace_back("Authorization", "Bearer " + api_key_);
  if (body) {
    req.headers.emplace_back("Content-Type", "application/json");
    req.body = body->dump(-1, ' ', false, json::error_handler_t::replace);
  }
  Result<HttpResponse> sent = [&] {
    MutexLock lock(&session_->mu);
    return session_->http.Send(req);
  }();
  ARCHIL_ASSIGN_OR_RETURN(HttpResponse res, std::move(sent));
  return DecodeApiReply(res.status, res.body);
}

Result<ApiReply> DecodeApiReply(int http_status, std::string_view body) {
  Status::Code code = CodeForHttpStatus(http_status);
  Result<wire::Envelope> envelope = wire::DecodeEnvelope(body);
  if (!envelope.ok()) {
    // A proxy's error page or another service: the HTTP status still says what kind of failure.
    return Status(code == Status::Code::kOk ? Status::Code::kCorruption : code,
                  "unexpected answer from the server (HTTP " + std::to_string(http_status) +
                      "): is this an archil control plane?");
  }
  if (!envelope->success) {
    return Status(code == Status::Code::kOk ? Status::Code::kInternal : code, envelope->error);
  }
  if (code != Status::Code::kOk) {
    return Status::Corruption("the server answered HTTP " + std::to_string(http_status) +
                              " with a success envelope");
  }
  ApiReply reply;
  reply.http_status = http_status;
  reply.data = std::move(envelope->data);
  reply.next_cursor = envelope->next_cursor.value_or("");
  return reply;
}

}  // namespace archil
