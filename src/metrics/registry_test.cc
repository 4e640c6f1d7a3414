#include "metrics/registry.h"

#include <gtest/gtest.h>

#include <sstream>
#include <thread>

namespace archil::metrics {
namespace {

// The lines of `text` that start with `prefix`.
std::vector<std::string> Lines(const std::string& text, const std::string& prefix) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(prefix, 0) == 0) out.push_back(line);
  }
  return out;
}

TEST(Registry, CountersRenderPerLabelSet) {
  Registry r;
  CounterFamily* f = r.AddCounter("archil_test_requests_total", "Requests.", {"op", "status"});
  f->With({"write", "ok"})->Add(3);
  f->With({"read", "ok"})->Add();
  f->With({"write", "ok"})->Add();
  EXPECT_EQ(f->With({"write", "ok"})->value(), 4u);
  const std::string text = r.Render();
  EXPECT_EQ(text,
            "# HELP archil_test_requests_total Requests.\n"
            "# TYPE archil_test_requests_total counter\n"
            "archil_test_requests_total{op=\"read\",status=\"ok\"} 1\n"
            "archil_test_requests_total{op=\"write\",status=\"ok\"} 4\n");
}

TEST(Registry, HistogramBucketsAreCumulativeAndEndWithInfEqualToTheCount) {
  Registry r;
  HistogramFamily* f =
      r.AddHistogram("archil_test_seconds", "Latency.", {"op"}, {0.001, 0.01, 0.1});
  Histogram* h = f->With({"write"});
  for (double v : {0.0005, 0.001, 0.002, 0.05, 3.0}) h->Observe(v);
  const std::string text = r.Render();
  EXPECT_EQ(Lines(text, "archil_test_seconds_bucket"),
            (std::vector<std::string>{"archil_test_seconds_bucket{op=\"write\",le=\"0.001\"} 2",
                                      "archil_test_seconds_bucket{op=\"write\",le=\"0.01\"} 3",
                                      "archil_test_seconds_bucket{op=\"write\",le=\"0.1\"} 4",
                                      "archil_test_seconds_bucket{op=\"write\",le=\"+Inf\"} 5"}));
  EXPECT_EQ(Lines(text, "archil_test_seconds_count"),
            std::vector<std::string>{"archil_test_seconds_count{op=\"write\"} 5"});
  EXPECT_EQ(Lines(text, "archil_test_seconds_sum"),
            std::vector<std::string>{"archil_test_seconds_sum{op=\"write\"} 3.0535"});
  EXPECT_EQ(Lines(text, "# TYPE"),
            std::vector<std::string>{"# TYPE archil_test_seconds histogram"});
}

TEST(Registry, CollectorsReportAtScrapeTime) {
  Registry r;
  int sessions = 2;
  r.AddCollector([&](Sink& s) {
    s.Gauge("archil_test_sessions", "Open sessions.", {}, sessions);
    s.Family("archil_test_backlog_bytes", "Per disk.", Type::kGauge);
    s.Sample("archil_test_backlog_bytes", {{"disk", "dsk-1"}}, 10);
    s.Sample("archil_test_backlog_bytes", {{"disk", "dsk-2"}}, 0);
  });
  EXPECT_NE(r.Render().find("archil_test_sessions 2\n"), std::string::npos);
  sessions = 5;
  const std::string text = r.Render();
  EXPECT_NE(text.find("archil_test_sessions 5\n"), std::string::npos);
  EXPECT_NE(text.find("archil_test_backlog_bytes{disk=\"dsk-2\"} 0\n"), std::string::npos);
}

TEST(Registry, CountsFromManyThreadsAreAllThere) {
  Registry r;
  Counter* c = r.AddCounter("archil_test_total", "n", {})->With({});
  Histogram* h = r.AddHistogram("archil_test_h", "n", {}, DefaultLatencyBounds())->With({});
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 10000; ++i) {
        c->Add();
        h->Observe(0.001);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(c->value(), 40000u);
  EXPECT_EQ(h->Read().cumulative.back(), 40000u);
  EXPECT_NEAR(h->Read().sum, 40.0, 1e-6);
}

}  // namespace
}  // namespace archil::metrics
