// MapEnv: a GetEnv (aws_credentials.h) over a fixed map, for tests.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "store/aws_credentials.h"

namespace archil::store {

inline GetEnv MapEnv(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const char* name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

}  // namespace archil::store
