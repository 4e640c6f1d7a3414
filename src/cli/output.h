// Output for people (aligned tables) and for scripts (--json).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace archil {

// Prints a header row and rows, columns padded to the widest cell, to stdout. With `quiet`
// (-q), only each row's first cell (its identifier), one per line, for scripts.
void PrintTable(bool quiet, const std::vector<std::string>& header,
                const std::vector<std::vector<std::string>>& rows);

// Pretty-printed JSON to stdout.
void PrintJson(const nlohmann::json& value);

// What a command that changed something prints: `data` as JSON with --json, else `message`
// (a line) unless --quiet.
void Report(bool json, bool quiet, const nlohmann::json& data, const std::string& message);

// Field as text: strings as they are, numbers in decimal, absent or null as "-".
std::string Field(const nlohmann::json& object, const char* key);

}  // namespace archil
