#include "cli/output.h"

#include <algorithm>
#include <cstdio>

namespace archil {

void PrintTable(bool quiet, const std::vector<std::string>& header,
                const std::vector<std::vector<std::string>>& rows) {
  if (quiet) {
    for (const auto& r : rows) {
      if (!r.empty()) std::printf("%s\n", r[0].c_str());
    }
    return;
  }
  std::vector<size_t> width(header.size(), 0);
  auto widen = [&](const std::vector<std::string>& row) {
    for (size_t i = 0; i < row.size() && i < width.size(); ++i)
      width[i] = std::max(width[i], row[i].size());
  };
  widen(header);
  for (const auto& r : rows) widen(r);
  auto print = [&](const std::vector<std::string>& row) {
    std::string line;
    for (size_t i = 0; i < row.size() && i < width.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line += std::string(width[i] - row[i].size() + 2, ' ');
    }
    std::printf("%s\n", line.c_str());
  };
  print(header);
  for (const auto& r : rows) print(r);
}

void PrintJson(const nlohmann::json& value) {
  std::printf("%s\n", value.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
}

void Report(bool json, bool quiet, const nlohmann::json& data, const std::string& message) {
  if (json) {
    PrintJson(data);
  } else if (!quiet) {
    std::printf("%s\n", message.c_str());
  }
}

std::string Field(const nlohmann::json& o, const char* key) {
  if (!o.is_object()) return "-";
  auto it = o.find(key);
  if (it == o.end() || it->is_null()) return "-";
  if (it->is_string()) return it->get<std::string>();
  return it->dump();
}

}  // namespace archil
