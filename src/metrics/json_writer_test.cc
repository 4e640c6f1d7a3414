#include "metrics/json_writer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "metrics/registry.h"

namespace archil::metrics {
namespace {

using json = nlohmann::json;

// What the exposition format would write, as JSON that parses: names, types, help, labels
// (escapes included) and values; +Inf and NaN as strings.
TEST(JsonWriter, WritesWhatTheTextWouldAsJson) {
  JsonWriter w;
  w.Family("a_total", "Help with \"quotes\" and \\ and\nnewline.", Type::kCounter);
  w.Sample("a_total", {{"op", "wr\"ite\n"}}, 3);
  w.Sample("a_total", {}, 0.25);
  w.Family("b", "Gauge.", Type::kGauge);
  w.Sample("b", {}, INFINITY);
  w.Sample("b", {{"x", "y"}}, NAN);
  const json j = json::parse(w.Finish());
  ASSERT_EQ(j["families"].size(), 2u);
  const json& a = j["families"][0];
  EXPECT_EQ(a["name"], "a_total");
  EXPECT_EQ(a["type"], "counter");
  EXPECT_EQ(a["help"], "Help with \"quotes\" and \\ and\nnewline.");
  ASSERT_EQ(a["samples"].size(), 2u);
  EXPECT_EQ(a["samples"][0]["labels"]["op"], "wr\"ite\n");
  EXPECT_EQ(a["samples"][0]["value"], 3);
  EXPECT_EQ(a["samples"][1]["value"], 0.25);
  EXPECT_EQ(j["families"][1]["samples"][0]["value"], "+Inf");
  EXPECT_EQ(j["families"][1]["samples"][1]["value"], "NaN");
}

// What the exposition rules refuse is left out here too, and the rest still parses.
TEST(JsonWriter, SkipsWhatTheFormatsRulesRefuse) {
  JsonWriter w;
  w.Family("ok", "", Type::kGauge);
  w.Sample("ok", {{"__reserved", "x"}}, 1);  // a bad label name
  w.Sample("other", {}, 1);                  // not this family's
  w.Sample("ok", {}, 2);
  w.Family("9bad", "", Type::kGauge);  // a bad name: the family and its samples go
  w.Sample("9bad", {}, 1);
  w.Family("ok", "", Type::kGauge);  // a name already written
  w.Sample("ok", {}, 3);
  const json j = json::parse(w.Finish());
  ASSERT_EQ(j["families"].size(), 1u);
  ASSERT_EQ(j["families"][0]["samples"].size(), 1u);
  EXPECT_EQ(j["families"][0]["samples"][0]["value"], 2);
  EXPECT_EQ(json::parse(JsonWriter().Finish())["families"].size(), 0u);
}

// A registry renders the same series either way.
TEST(JsonWriter, ARegistryRendersItsSeriesAsJson) {
  Registry r;
  r.AddCounter("c_total", "C.", {"op"})->With({"read"})->Add(5);
  r.AddHistogram("h_seconds", "H.", {}, {0.1, 1})->With({})->Observe(0.5);
  r.AddCollector([](Sink& s) { s.Gauge("g", "G.", {}, 7); });
  const json j = json::parse(r.RenderJson());
  ASSERT_EQ(j["families"].size(), 3u);
  EXPECT_EQ(j["families"][0]["samples"][0]["value"], 5);
  EXPECT_EQ(j["families"][1]["type"], "histogram");
  EXPECT_EQ(j["families"][1]["samples"].size(), 5u);  // 2 bounds, +Inf, _sum, _count
  EXPECT_EQ(j["families"][2]["samples"][0]["value"], 7);
}

}  // namespace
}  // namespace archil::metrics
