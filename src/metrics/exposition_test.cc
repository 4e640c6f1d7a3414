#include "metrics/exposition.h"

#include <gtest/gtest.h>

#include <limits>

namespace archil::metrics {
namespace {

TEST(Exposition, NamesFollowTheFormatsRules) {
  for (const char* ok : {"a", "archil_disk_requests_total", "_x", "ns:sub_name", "A9"}) {
    EXPECT_TRUE(IsValidMetricName(ok)) << ok;
  }
  for (const char* bad : {"", "9a", "a-b", "a b", "é", "a{"})
    EXPECT_FALSE(IsValidMetricName(bad)) << bad;
  EXPECT_TRUE(IsValidLabelName("op"));
  EXPECT_FALSE(IsValidLabelName("a:b"));       // colons are for metric names only
  EXPECT_FALSE(IsValidLabelName("__name__"));  // reserved
  EXPECT_FALSE(IsValidLabelName("1x"));
}

TEST(Exposition, ValuesAreExactOrShortestAndSpecialsAsSpelled) {
  EXPECT_EQ(FormatValue(0), "0");
  EXPECT_EQ(FormatValue(42), "42");
  EXPECT_EQ(FormatValue(-3), "-3");
  EXPECT_EQ(FormatValue(18446744073709551615.0), "1.8446744073709552e+19");
  EXPECT_EQ(FormatValue(9007199254740991.0), "9007199254740991");
  EXPECT_EQ(FormatValue(0.25), "0.25");
  EXPECT_EQ(FormatValue(0.1), "0.1");
  EXPECT_EQ(FormatValue(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(FormatValue(-std::numeric_limits<double>::infinity()), "-Inf");
  EXPECT_EQ(FormatValue(std::numeric_limits<double>::quiet_NaN()), "NaN");
}

TEST(Exposition, HelpAndLabelValuesAreEscaped) {
  TextWriter w;
  w.Family("x_total", "line one\nback\\slash \"quoted\"", Type::kCounter);
  w.Sample("x_total", {{"path", "a\"b\\c\nd"}, {"op", "write"}}, 3);
  EXPECT_EQ(w.text(),
            "# HELP x_total line one\\nback\\\\slash \"quoted\"\n"
            "# TYPE x_total counter\n"
            "x_total{path=\"a\\\"b\\\\c\\nd\",op=\"write\"} 3\n");
  EXPECT_EQ(w.skipped(), 0);
}

TEST(Exposition, AFamilyOnceAndSamplesOnlyUnderTheirOwnFamily) {
  TextWriter w;
  w.Family("h", "a histogram", Type::kHistogram);
  w.Sample("h_bucket", {{"le", "+Inf"}}, 1);
  w.Sample("h_sum", {}, 0.5);
  w.Sample("h_count", {}, 1);
  w.Sample("other", {}, 1);                   // not this family's: skipped
  w.Sample("h_sum", {{"bad-name", "x"}}, 1);  // an invalid label name: skipped
  w.Family("h", "again", Type::kGauge);  // a second family of one name: skipped with its samples
  w.Sample("h", {}, 7);
  w.Family("9bad", "invalid", Type::kGauge);
  w.Sample("9bad", {}, 1);
  EXPECT_EQ(w.text(),
            "# HELP h a histogram\n# TYPE h histogram\nh_bucket{le=\"+Inf\"} 1\nh_sum 0.5\n"
            "h_count 1\n");
  EXPECT_EQ(w.skipped(), 4);
  w.Family("g", "a gauge", Type::kGauge);
  w.Sample("g", {}, 2);
  EXPECT_NE(w.text().find("# TYPE g gauge\ng 2\n"), std::string::npos);
}

}  // namespace
}  // namespace archil::metrics
