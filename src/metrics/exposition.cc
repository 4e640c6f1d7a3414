#include "metrics/exposition.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace archil::metrics {
namespace {

bool NameChar(char c, bool first, bool colon) {
  const bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  if (first) return letter || (colon && c == ':');
  return letter || (c >= '0' && c <= '9') || (colon && c == ':');
}

bool ValidName(std::string_view name, bool colon) {
  if (name.empty()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    if (!NameChar(name[i], i == 0, colon)) return false;
  }
  return true;
}

void Escape(std::string_view s, bool quote, std::string* out) {
  for (char c : s) {
    if (c == '\\') {
      *out += "\\\\";
    } else if (c == '\n') {
      *out += "\\n";
    } else if (quote && c == '"') {
      *out += "\\\"";
    } else {
      *out += c;
    }
  }
}

}  // namespace

bool IsValidMetricName(std::string_view name) { return ValidName(name, /*colon=*/true); }

bool IsValidLabelName(std::string_view name) {
  return ValidName(name, /*colon=*/false) && !name.starts_with("__");
}

std::string FormatValue(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (v == std::floor(v) && std::fabs(v) < 9007199254740992.0) {  // 2^53: exact as an integer
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0f", v);
    return buf;
  }
  char buf[32];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

void TextWriter::Family(std::string_view name, std::string_view help, Type type) {
  current_ = std::string(name);
  skipping_ = !IsValidMetricName(name) || families_.contains(name);
  if (skipping_) {
    ++skipped_;
    return;
  }
  families_.insert(current_);
  out_ += "# HELP ";
  out_ += name;
  out_ += ' ';
  Escape(help, /*quote=*/false, &out_);
  out_ += "\n# TYPE ";
  out_ += name;
  out_ += type == Type::kCounter ? " counter\n"
          : type == Type::kGauge ? " gauge\n"
                                 : " histogram\n";
}

void TextWriter::Sample(std::string_view name, const LabelPairs& labels, double value) {
  if (skipping_) return;
  const bool own = name == current_ || name == current_ + "_bucket" || name == current_ + "_sum" ||
                   name == current_ + "_count";
  bool ok = own && IsValidMetricName(name);
  for (const auto& [k, v] : labels) ok = ok && IsValidLabelName(k);
  if (!ok) {
    ++skipped_;
    return;
  }
  out_ += name;
  if (!labels.empty()) {
    out_ += '{';
    for (size_t i = 0; i < labels.size(); ++i) {
      if (i > 0) out_ += ',';
      out_ += labels[i].first;
      out_ += "=\"";
      Escape(labels[i].second, /*quote=*/true, &out_);
      out_ += '"';
    }
    out_ += '}';
  }
  out_ += ' ';
  out_ += FormatValue(value);
  out_ += '\n';
}

}  // namespace archil::metrics
