// The Prometheus text exposition format (version 0.0.4), written: one file that knows its rules.
//
//   # HELP name text          (text: '\' and newline escaped)
//   # TYPE name counter|gauge|histogram
//   name{label="value",...} 12.5      (values: '\', '"' and newline escaped)
//
// Names match [a-zA-Z_:][a-zA-Z0-9_:]*, label names [a-zA-Z_][a-zA-Z0-9_]* and do not start with
// "__"; a family's samples follow its HELP and TYPE lines, and a name appears in one family only.
// Numbers: integers exactly, others in the shortest form that reads back the same; +Inf, -Inf,
// NaN as the format spells them.
//
// Thread-safety: a TextWriter is used by one thread.
#pragma once

#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace archil::metrics {

enum class Type { kCounter, kGauge, kHistogram };

using LabelPairs = std::vector<std::pair<std::string, std::string>>;

bool IsValidMetricName(std::string_view name);
bool IsValidLabelName(std::string_view name);
// The number as the format writes it.
std::string FormatValue(double v);

// Where families and samples go as they are rendered: the exposition format (TextWriter) or
// JSON (json_writer.h).
class Writer {
 public:
  virtual ~Writer() = default;
  virtual void Family(std::string_view name, std::string_view help, Type type) = 0;
  virtual void Sample(std::string_view name, const LabelPairs& labels, double value) = 0;
  // Everything written so far.
  virtual std::string Finish() const = 0;
};

class TextWriter final : public Writer {
 public:
  // Starts family `name`. A name already written, or an invalid one, is skipped with all its
  // samples (a programming error must not make the whole scrape unreadable) and counted in
  // skipped().
  void Family(std::string_view name, std::string_view help, Type type) override;
  // A sample of the current family: `name` is the family's, or for a histogram its _bucket,
  // _sum or _count. Samples with an invalid label name are skipped and counted.
  void Sample(std::string_view name, const LabelPairs& labels, double value) override;
  const std::string& text() const { return out_; }
  std::string Finish() const override { return out_; }
  int skipped() const { return skipped_; }

 private:
  std::string out_;
  std::set<std::string, std::less<>> families_;
  std::string current_;
  bool skipping_ = false;
  int skipped_ = 0;
};

}  // namespace archil::metrics
