#include "control/byte_range.h"

#include <optional>

namespace archil {
namespace {

std::string_view TrimSpaces(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// 1 to 18 decimal digits (so no overflow), or nullopt.
std::optional<uint64_t> Digits(std::string_view s) {
  if (s.empty() || s.size() > 18) return std::nullopt;
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  return v;
}

bool StartsWithBytesUnit(std::string_view s) {
  if (s.size() < 6) return false;
  static constexpr std::string_view kUnit = "bytes=";
  for (size_t i = 0; i < kUnit.size(); ++i) {
    char c = s[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != kUnit[i]) return false;
  }
  return true;
}

}  // namespace

ByteRange ResolveByteRange(std::string_view header, uint64_t size) {
  const ByteRange whole{ByteRange::Kind::kWhole, 0, size};
  const ByteRange unsatisfiable{ByteRange::Kind::kUnsatisfiable, 0, 0};
  header = TrimSpaces(header);
  if (!StartsWithBytesUnit(header)) return whole;
  std::string_view spec = TrimSpaces(header.substr(6));
  if (spec.find(',') != std::string_view::npos) return whole;  // several ranges
  size_t dash = spec.find('-');
  if (dash == std::string_view::npos) return whole;
  std::string_view a = TrimSpaces(spec.substr(0, dash));
  std::string_view b = TrimSpaces(spec.substr(dash + 1));
  if (a.empty()) {  // bytes=-n: the last n bytes
    std::optional<uint64_t> n = Digits(b);
    if (!n) return whole;
    if (*n == 0 || size == 0) return unsatisfiable;
    const uint64_t len = *n < size ? *n : size;
    return {ByteRange::Kind::kPartial, size - len, len};
  }
  std::optional<uint64_t> first = Digits(a);
  if (!first) return whole;
  uint64_t last = size == 0 ? 0 : size - 1;
  if (!b.empty()) {
    std::optional<uint64_t> l = Digits(b);
    if (!l || *l < *first) return whole;
    if (*l < last) last = *l;
  }
  if (*first >= size) return unsatisfiable;
  return {ByteRange::Kind::kPartial, *first, last - *first + 1};
}

}  // namespace archil
