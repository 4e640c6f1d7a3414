// Safe JSON for request bodies: bounded size and depth, no exceptions, invalid UTF-8 rejected on
// input and replaced on output, so no body can make the JSON library throw or recurse without
// bound.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>

#include "base/status.h"

namespace archil {

inline constexpr size_t kMaxJsonDepth = 32;

// Parses `body` as a JSON object. InvalidArgument for malformed JSON, invalid UTF-8, nesting
// deeper than kMaxJsonDepth (checked before parsing, so the recursive parser cannot overflow the
// stack), or a top-level value that is not an object.
Result<nlohmann::json> ParseJsonObject(std::string_view body);

// Rejects members of `object` not in `allowed`, naming the first unknown one.
Status CheckKnownFields(const nlohmann::json& object,
                        std::initializer_list<std::string_view> allowed);

// Typed member access, the one way this project reads JSON fields (request bodies, a server's
// replies, the tier's records). Absent (or null) -> nullopt; present with the wrong type ->
// InvalidArgument naming the field and the expected type. An `object` that is not an object has
// no members.
Result<std::optional<std::string>> OptionalString(const nlohmann::json& object, const char* field);
Result<std::optional<uint64_t>> OptionalUint(const nlohmann::json& object, const char* field,
                                             uint64_t max);
Result<std::optional<bool>> OptionalBool(const nlohmann::json& object, const char* field);
// As the Optional ones, but absent is InvalidArgument.
Result<std::string> RequiredString(const nlohmann::json& object, const char* field);
Result<uint64_t> RequiredUint(const nlohmann::json& object, const char* field, uint64_t max);
Result<bool> RequiredBool(const nlohmann::json& object, const char* field);
// As OptionalString, with `fallback` when absent.
Result<std::string> StringOr(const nlohmann::json& object, const char* field,
                             std::string_view fallback);
// InvalidArgument unless `value` is a JSON object (`what` names it).
Status RequireObject(const nlohmann::json& value, std::string_view what);

// Serialises without ever throwing: invalid UTF-8 in strings becomes U+FFFD.
std::string DumpJson(const nlohmann::json& value);

}  // namespace archil
