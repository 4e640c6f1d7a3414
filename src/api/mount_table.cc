#include "mount/mountinfo.h"

#include <cstdio>
#include <fstream>
#include <sstream>
#include <vector>

namespace archil::mount {
namespace {

// mountinfo escapes space, tab, newline and backslash as \ooo.
std::string Unescape(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size()) {
      int v = 0;
      bool ok = true;
      for (size_t k = 1; k <= 3; ++k) {
        char c = s[i + k];
        if (c < '0' || c > '7') ok = false;
        v = v * 8 + (c - '0');
      }
      if (ok) {
        out.push_back(static_cast<char>(v));
        i += 3;
        continue;
      }
    }
    out.push_back(s[i]);
  }
  return out;
}

}  // namespace

std::optional<MountEntry> FindMount(const std::string& mountpoint, const std::string& table) {
  std::string text = table;
  if (text.empty()) {
    std::ifstream in("/proc/self/mountinfo");
    std::stringstream ss;
    ss << in.rdbuf();
    text = ss.str();
  }
  std::optional<MountEntry> found;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    // id parent major:minor root mountpoint options [optional...] - fstype source superoptions
    std::istringstream f(line);
    std::vector<std::string> fields;
    std::string w;
    while (f >> w) fields.push_back(w);
    if (fields.size() < 7) continue;
    size_t dash = 6;
    while (dash < fields.size() && fields[dash] != "-") ++dash;
    if (dash + 2 >= fields.size()) continue;
    MountEntry e;
    e.mountpoint = Unescape(fields[4]);
    if (e.mountpoint != mountpoint) continue;
    if (std::sscanf(fields[2].c_str(), "%u:%u", &e.major, &e.minor) != 2) continue;
    e.fs_type = fields[dash + 1];
    e.source = Unescape(fields[dash + 2]);
    found = e;  // later lines are mounted on top of earlier ones
  }
  return found;
}

}  // namespace archil::mount
