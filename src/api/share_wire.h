// The share route's JSON (POST /api/disks/{id}/share, docs/api.md "Share links"), in the style of
// wire.h: the request decoded strictly (unknown fields and wrong types refused, naming the
// field), the reply encoded by the server and decoded by the CLI.
//
// Thread-safety: pure functions over values.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "base/status.h"

namespace archil::wire {

inline constexpr uint64_t kDefaultShareSeconds = 86400;  // a day
inline constexpr uint64_t kMaxShareSeconds = 604800;     // a week

struct ShareRequest {
  std::string key;  // the file's path in the disk
  uint64_t expires_in = kDefaultShareSeconds;
  bool operator==(const ShareRequest&) const = default;
};

struct ShareReply {
  std::string url;
  uint64_t expires_in = 0;
  bool operator==(const ShareReply&) const = default;
};

nlohmann::json ToJson(const ShareRequest& v);
nlohmann::json ToJson(const ShareReply& v);
// InvalidArgument naming the field: not a JSON object, an unknown field, a wrong type, a missing
// key, expiresIn 0 or over kMaxShareSeconds.
Result<ShareRequest> DecodeShareRequest(std::string_view body);
// Corruption when a field is missing or has the wrong type.
Result<ShareReply> DecodeShareReply(const nlohmann::json& j);

}  // namespace archil::wire
