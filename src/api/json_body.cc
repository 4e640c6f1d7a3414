#include "api/json_body.h"

#include <optional>
#include <set>
#include <string>
#include <vector>

namespace archil {

using nlohmann::json;

Result<json> ParseJsonObject(std::string_view body) {
  size_t depth = 0;
  bool in_string = false;
  bool escaped = false;
  for (char c : body) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      if (++depth > kMaxJsonDepth) {
        return Status::InvalidArgument("JSON nested deeper than " + std::to_string(kMaxJsonDepth) +
                                       " levels");
      }
    } else if ((c == '}' || c == ']') && depth > 0) {
      --depth;
    }
  }
  // A key given twice in one object is refused (nlohmann keeps the last): two readers of the
  // same body must never see two different requests.
  std::vector<std::set<std::string>> keys;  // of each object being parsed, innermost last
  std::optional<std::string> duplicate;
  json::parser_callback_t track = [&](int, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::object_start) {
      keys.emplace_back();
    } else if (event == json::parse_event_t::object_end && !keys.empty()) {
      keys.pop_back();
    } else if (event == json::parse_event_t::key && !keys.empty() && parsed.is_string()) {
      if (!keys.back().insert(parsed.get<std::string>()).second && !duplicate) {
        duplicate = parsed.get<std::string>();
      }
    }
    return true;
  };
  json j = json::parse(body.begin(), body.end(), track, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    return Status::InvalidArgument("request body is not valid JSON (or not valid UTF-8)");
  }
  if (duplicate) {
    return Status::InvalidArgument("field " + DumpJson(json(*duplicate)) + " given twice");
  }
  if (!j.is_object()) return Status::InvalidArgument("request body must be a JSON object");
  return j;
}

Status CheckKnownFields(const json& object, std::initializer_list<std::string_view> allowed) {
  for (const auto& item : object.items()) {
    bool known = false;
    for (std::string_view a : allowed) known = known || item.key() == a;
    if (!known) {
      json key = item.key();
      return Status::InvalidArgument("unknown field " + DumpJson(key));
    }
  }
  return Status::Ok();
}

Result<std::optional<std::string>> OptionalString(const json& object, const char* field) {
  auto it = object.find(field);
  if (it == object.end() || it->is_null()) return std::optional<std::string>();
  if (!it->is_string()) return Status::InvalidArgument(std::string(field) + " must be a string");
  return std::optional<std::string>(it->get<std::string>());
}

Result<std::optional<uint64_t>> OptionalUint(const json& object, const char* field, uint64_t max) {
  auto it = object.find(field);
  if (it == object.end() || it->is_null()) return std::optional<uint64_t>();
  if (!it->is_number_unsigned() || it->get<uint64_t>() > max) {
    return Status::InvalidArgument(std::string(field) + " must be an integer from 0 to " +
                                   std::to_string(max));
  }
  return std::optional<uint64_t>(it->get<uint64_t>());
}

Result<std::optional<bool>> OptionalBool(const json& object, const char* field) {
  auto it = object.find(field);
  if (it == object.end() || it->is_null()) return std::optional<bool>();
  if (!it->is_boolean()) return Status::InvalidArgument(std::string(field) + " must be a boolean");
  return std::optional<bool>(it->get<bool>());
}

namespace {
template <typename T>
Result<T> Required(Result<std::optional<T>> v, const char* field) {
  if (!v.ok()) return v.status();
  if (!*v) return Status::InvalidArgument("missing required field " + std::string(field));
  return **v;
}
}  // namespace

Result<std::string> RequiredString(const json& object, const char* field) {
  return Required(OptionalString(object, field), field);
}

Result<uint64_t> RequiredUint(const json& object, const char* field, uint64_t max) {
  return Required(OptionalUint(object, field, max), field);
}

Result<bool> RequiredBool(const json& object, const char* field) {
  return Required(OptionalBool(object, field), field);
}

Result<std::string> StringOr(const json& object, const char* field, std::string_view fallback) {
  ARCHIL_ASSIGN_OR_RETURN(std::optional<std::string> v, OptionalString(object, field));
  return v ? std::move(*v) : std::string(fallback);
}

Status RequireObject(const json& value, std::string_view what) {
  if (value.is_object()) return Status::Ok();
  return Status::InvalidArgument(std::string(what) + " must be an object");
}

std::string DumpJson(const json& value) {
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace archil
