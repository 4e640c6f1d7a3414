#include "metrics/registry.h"

#include <algorithm>
#include <cmath>

#include "metrics/json_writer.h"

namespace archil::metrics {

Histogram::Histogram(std::vector<double> bounds)
    : bounds_(std::move(bounds)),
      counts_(std::make_unique<std::atomic<uint64_t>[]>(bounds_.size() + 1)) {}

void Histogram::Observe(double v) {
  const size_t i =
      static_cast<size_t>(std::lower_bound(bounds_.begin(), bounds_.end(), v) - bounds_.begin());
  counts_[i].fetch_add(1, std::memory_order_relaxed);
  if (v > 0 && std::isfinite(v)) {
    sum_nanos_.fetch_add(static_cast<uint64_t>(std::llround(v * 1e9)), std::memory_order_relaxed);
  }
}

Histogram::Snapshot Histogram::Read() const {
  Snapshot s;
  s.bounds = bounds_;
  uint64_t running = 0;
  for (size_t i = 0; i <= bounds_.size(); ++i) {
    running += counts_[i].load(std::memory_order_relaxed);
    s.cumulative.push_back(running);
  }
  s.sum = static_cast<double>(sum_nanos_.load(std::memory_order_relaxed)) / 1e9;
  return s;
}

std::vector<double> DefaultLatencyBounds() {
  return {0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
          0.05,    0.1,    0.25,    0.5,    1,     2.5,    5,     10};
}

void Sink::Gauge(const std::string& name, const std::string& help, const LabelPairs& labels,
                 double value) {
  w_->Family(name, help, Type::kGauge);
  w_->Sample(name, labels, value);
}

void Sink::Counter(const std::string& name, const std::string& help, const LabelPairs& labels,
                   double value) {
  w_->Family(name, help, Type::kCounter);
  w_->Sample(name, labels, value);
}

CounterFamily* Registry::AddCounter(std::string name, std::string help,
                                    std::vector<std::string> label_names) {
  auto f = std::make_unique<CounterFamily>(std::move(name), std::move(help), std::move(label_names),
                                           [] { return std::make_unique<Counter>(); });
  MutexLock lock(&mu_);
  counters_.push_back(std::move(f));
  return counters_.back().get();
}

HistogramFamily* Registry::AddHistogram(std::string name, std::string help,
                                        std::vector<std::string> label_names,
                                        std::vector<double> bounds) {
  auto f = std::make_unique<HistogramFamily>(
      std::move(name), std::move(help), std::move(label_names),
      [bounds = std::move(bounds)] { return std::make_unique<Histogram>(bounds); });
  MutexLock lock(&mu_);
  histograms_.push_back(std::move(f));
  return histograms_.back().get();
}

void Registry::AddCollector(std::function<void(Sink&)> collect) {
  MutexLock lock(&mu_);
  collectors_.push_back(std::move(collect));
}

std::string Registry::Render() const {
  TextWriter w;
  RenderTo(&w);
  return w.Finish();
}

std::string Registry::RenderJson() const {
  JsonWriter w;
  RenderTo(&w);
  return w.Finish();
}

void Registry::RenderTo(Writer* out) const {
  Writer& w = *out;
  MutexLock lock(&mu_);
  for (const auto& f : counters_) {
    w.Family(f->name(), f->help(), Type::kCounter);
    f->ForEach([&](const LabelPairs& labels, const Counter& c) {
      w.Sample(f->name(), labels, static_cast<double>(c.value()));
    });
  }
  for (const auto& f : histograms_) {
    w.Family(f->name(), f->help(), Type::kHistogram);
    f->ForEach([&](const LabelPairs& labels, const Histogram& h) {
      const Histogram::Snapshot s = h.Read();
      LabelPairs with_le = labels;
      with_le.emplace_back("le", "");
      for (size_t i = 0; i <= s.bounds.size(); ++i) {
        with_le.back().second = i < s.bounds.size() ? FormatValue(s.bounds[i]) : "+Inf";
        w.Sample(f->name() + "_bucket", with_le, static_cast<double>(s.cumulative[i]));
      }
      w.Sample(f->name() + "_sum", labels, s.sum);
      w.Sample(f->name() + "_count", labels, static_cast<double>(s.cumulative.back()));
    });
  }
  Sink sink(&w);
  for (const auto& c : collectors_) c(sink);
}

}  // namespace archil::metrics
