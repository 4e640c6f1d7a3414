#include "api/grep_wire.h"

#include <algorithm>

#include "api/json_body.h"

namespace archil::wire {

using nlohmann::json;

json ToJson(const GrepRequest& v) {
  json j = {{"directory", v.directory},     {"pattern", v.pattern},
            {"recursive", v.recursive},     {"maxDurationSeconds", v.max_duration_seconds},
            {"concurrency", v.concurrency}, {"maxResults", v.max_results}};
  if (v.checkpoint) j["checkpoint"] = *v.checkpoint;
  return j;
}

json ToJson(const GrepReply& v) {
  json matches = json::array();
  for (const GrepMatch& m : v.matches) {
    matches.push_back({{"file", m.file}, {"line", m.line}, {"text", m.text}});
  }
  return {{"matches", std::move(matches)},
          {"stoppedReason", v.stopped_reason},
          {"filesScanned", v.files_scanned},
          {"durationMs", static_cast<uint64_t>(std::max<int64_t>(0, v.duration_ms))}};
}

namespace {

// A number in [1, max], or `fallback` when absent.
Result<uint64_t> GrepLimit(const json& j, const char* field, uint64_t max, uint64_t fallback) {
  ARCHIL_ASSIGN_OR_RETURN(std::optional<uint64_t> v, OptionalUint(j, field, max));
  if (!v) return fallback;
  if (*v == 0) return Status::InvalidArgument(std::string(field) + " must be at least 1");
  return *v;
}

}  // namespace

Result<GrepRequest> DecodeGrepRequest(std::string_view body) {
  ARCHIL_ASSIGN_OR_RETURN(json j, ParseJsonObject(body));
  ARCHIL_RETURN_IF_ERROR(
      CheckKnownFields(j, {"directory", "pattern", "recursive", "maxDurationSeconds", "concurrency",
                           "maxResults", "checkpoint"}));
  GrepRequest r;
  ARCHIL_ASSIGN_OR_RETURN(r.pattern, RequiredString(j, "pattern"));
  ARCHIL_ASSIGN_OR_RETURN(r.directory, StringOr(j, "directory", "/"));
  ARCHIL_ASSIGN_OR_RETURN(std::optional<bool> recursive, OptionalBool(j, "recursive"));
  r.recursive = recursive.value_or(false);
  ARCHIL_ASSIGN_OR_RETURN(r.max_duration_seconds, GrepLimit(j, "maxDurationSeconds", 3600, 30));
  ARCHIL_ASSIGN_OR_RETURN(r.concurrency, GrepLimit(j, "concurrency", 16, 4));
  ARCHIL_ASSIGN_OR_RETURN(r.max_results, GrepLimit(j, "maxResults", 10000, 1000));
  ARCHIL_ASSIGN_OR_RETURN(r.checkpoint, OptionalString(j, "checkpoint"));
  return r;
}

namespace {

Result<GrepReply> ReadGrepReply(const json& j) {
  ARCHIL_RETURN_IF_ERROR(RequireObject(j, "grep reply"));
  GrepReply r;
  auto matches = j.find("matches");
  if (matches == j.end() || !matches->is_array()) {
    return Status::InvalidArgument("matches is not an array");
  }
  for (const json& m : *matches) {
    ARCHIL_RETURN_IF_ERROR(RequireObject(m, "grep match"));
    GrepMatch g;
    ARCHIL_ASSIGN_OR_RETURN(g.file, RequiredString(m, "file"));
    ARCHIL_ASSIGN_OR_RETURN(g.line, RequiredUint(m, "line", UINT64_MAX));
    ARCHIL_ASSIGN_OR_RETURN(g.text, RequiredString(m, "text"));
    r.matches.push_back(std::move(g));
  }
  ARCHIL_ASSIGN_OR_RETURN(r.stopped_reason, RequiredString(j, "stoppedReason"));
  ARCHIL_ASSIGN_OR_RETURN(r.files_scanned, RequiredUint(j, "filesScanned", UINT64_MAX));
  ARCHIL_ASSIGN_OR_RETURN(uint64_t ms, RequiredUint(j, "durationMs", INT64_MAX));
  r.duration_ms = static_cast<int64_t>(ms);
  return r;
}

}  // namespace

Result<GrepReply> DecodeGrepReply(const json& j) {
  Result<GrepReply> r = ReadGrepReply(j);
  if (r.ok()) return r;
  return Status::Corruption("the server's grep reply: " + r.status().message());
}

}  // namespace archil::wire
