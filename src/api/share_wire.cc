#include "api/share_wire.h"

#include "api/json_body.h"

namespace archil::wire {

using nlohmann::json;

json ToJson(const ShareRequest& v) { return {{"key", v.key}, {"expiresIn", v.expires_in}}; }

json ToJson(const ShareReply& v) { return {{"url", v.url}, {"expiresIn", v.expires_in}}; }

Result<ShareRequest> DecodeShareRequest(std::string_view body) {
  ARCHIL_ASSIGN_OR_RETURN(json j, ParseJsonObject(body));
  ARCHIL_RETURN_IF_ERROR(CheckKnownFields(j, {"key", "expiresIn"}));
  ShareRequest r;
  ARCHIL_ASSIGN_OR_RETURN(r.key, RequiredString(j, "key"));
  ARCHIL_ASSIGN_OR_RETURN(std::optional<uint64_t> expires,
                          OptionalUint(j, "expiresIn", kMaxShareSeconds));
  if (expires && *expires == 0) return Status::InvalidArgument("expiresIn must be at least 1");
  r.expires_in = expires.value_or(kDefaultShareSeconds);
  return r;
}

Result<ShareReply> DecodeShareReply(const json& j) {
  Status s = RequireObject(j, "share reply");
  ShareReply r;
  if (s.ok()) {
    Result<std::string> url = RequiredString(j, "url");
    Result<uint64_t> expires = RequiredUint(j, "expiresIn", UINT64_MAX);
    if (url.ok() && expires.ok()) return ShareReply{*url, *expires};
    s = url.ok() ? expires.status() : url.status();
  }
  return Status::Corruption("the server's share reply: " + s.message());
}

}  // namespace archil::wire
