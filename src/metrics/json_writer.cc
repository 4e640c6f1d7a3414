#include "metrics/json_writer.h"

#include <cmath>
#include <cstdio>

namespace archil::metrics {
namespace {

void AppendString(std::string_view s, std::string* out) {
  *out += '"';
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      *out += '\\';
      *out += ch;
    } else if (c < 0x20) {
      char esc[8];
      std::snprintf(esc, sizeof esc, "\\u%04x", c);
      *out += esc;
    } else {
      *out += ch;
    }
  }
  *out += '"';
}

const char* TypeName(Type t) {
  return t == Type::kCounter ? "counter" : t == Type::kGauge ? "gauge" : "histogram";
}

}  // namespace

void JsonWriter::Family(std::string_view name, std::string_view help, Type type) {
  const int skipped = rules_.skipped();
  rules_.Family(name, help, type);
  if (!current_.empty()) {
    if (!families_.empty()) families_ += ',';
    families_ += current_ + "]}";
    current_.clear();
  }
  if (rules_.skipped() != skipped) return;
  current_ = "{\"name\":";
  AppendString(name, &current_);
  current_ += ",\"type\":\"";
  current_ += TypeName(type);
  current_ += "\",\"help\":";
  AppendString(help, &current_);
  current_ += ",\"samples\":[";
  current_has_samples_ = false;
}

void JsonWriter::Sample(std::string_view name, const LabelPairs& labels, double value) {
  const int skipped = rules_.skipped();
  rules_.Sample(name, labels, value);
  if (rules_.skipped() != skipped || current_.empty()) return;
  if (current_has_samples_) current_ += ',';
  current_has_samples_ = true;
  current_ += "{\"name\":";
  AppendString(name, &current_);
  current_ += ",\"labels\":{";
  for (size_t i = 0; i < labels.size(); ++i) {
    if (i > 0) current_ += ',';
    AppendString(labels[i].first, &current_);
    current_ += ':';
    AppendString(labels[i].second, &current_);
  }
  current_ += "},\"value\":";
  if (std::isfinite(value)) {
    current_ += FormatValue(value);
  } else {
    AppendString(FormatValue(value), &current_);
  }
  current_ += '}';
}

std::string JsonWriter::Finish() const {
  std::string all = families_;
  if (!current_.empty()) {
    if (!all.empty()) all += ',';
    all += current_ + "]}";
  }
  return "{\"families\":[" + all + "]}\n";
}

}  // namespace archil::metrics
