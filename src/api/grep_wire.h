// The grep route's JSON (POST /api/disks/{id}/grep, docs/api.md "Grep"), in the style of wire.h:
// the request decoded strictly (unknown fields and wrong types refused, naming the field), the
// reply encoded by the server and decoded leniently by a client.
//
// Thread-safety: pure functions over values.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace archil::wire {

struct GrepRequest {
  std::string directory = "/";
  std::string pattern;
  bool recursive = false;
  uint64_t max_duration_seconds = 30;     // 1..3600
  uint64_t concurrency = 4;               // 1..16
  uint64_t max_results = 1000;            // 1..10000
  std::optional<std::string> checkpoint;  // search this checkpoint instead of the head
  bool operator==(const GrepRequest&) const = default;
};

struct GrepMatch {
  std::string file;
  uint64_t line = 0;
  std::string text;
  bool operator==(const GrepMatch&) const = default;
};

struct GrepReply {
  std::vector<GrepMatch> matches;
  std::string stopped_reason;
  uint64_t files_scanned = 0;
  int64_t duration_ms = 0;
  bool operator==(const GrepReply&) const = default;
};

nlohmann::json ToJson(const GrepRequest& v);
nlohmann::json ToJson(const GrepReply& v);
// InvalidArgument naming the field: not a JSON object, an unknown field, a wrong type, a missing
// pattern, a number out of its range.
Result<GrepRequest> DecodeGrepRequest(std::string_view body);
// Corruption when a field read has the wrong type or is missing.
Result<GrepReply> DecodeGrepReply(const nlohmann::json& j);

}  // namespace archil::wire
