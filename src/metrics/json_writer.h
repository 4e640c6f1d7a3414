// JsonWriter: a registry's families and samples as one JSON document, for tools that would rather
// not parse the exposition format (`archil metrics --json`):
//
//   {"families": [{"name": "archil_client_requests_total", "type": "counter", "help": "...",
//                  "samples": [{"name": "archil_client_requests_total",
//                               "labels": {"op": "write"}, "value": 3}]}]}
//
// The same rules as the exposition format decide what is written: a family or sample the
// TextWriter would skip is skipped here too. Values that JSON cannot spell (+Inf, -Inf, NaN) are
// the strings the exposition format uses.
//
// Thread-safety: a JsonWriter is used by one thread.
#pragma once

#include <string>

#include "metrics/exposition.h"

namespace archil::metrics {

class JsonWriter final : public Writer {
 public:
  void Family(std::string_view name, std::string_view help, Type type) override;
  void Sample(std::string_view name, const LabelPairs& labels, double value) override;
  std::string Finish() const override;

 private:
  TextWriter rules_;      // written alongside, only to apply its rules
  std::string families_;  // the families closed so far, comma-separated
  std::string current_;   // the open family, up to its "samples": [
  bool current_has_samples_ = false;
};

}  // namespace archil::metrics
