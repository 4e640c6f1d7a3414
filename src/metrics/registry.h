// Metrics a process keeps and renders for a Prometheus scrape: counters and histograms updated on
// the hot path without locks, and collectors that report, at scrape time, what other parts
// already count (the engine's commits, the tier's backlog) as gauges or counters.
//
//   Registry r;
//   CounterFamily* req = r.AddCounter("archil_disk_requests_total", "Requests answered", {"op"});
//   Counter* writes = req->With({"write"});          // look up once, keep the pointer
//   writes->Add();
//   HistogramFamily* lat = r.AddHistogram("archil_disk_request_seconds", "...", {"op"},
//                                         DefaultLatencyBounds());
//   lat->With({"write"})->Observe(0.0004);
//   r.AddCollector([&](Sink& s) { s.Gauge("archil_sessions", "Open sessions", {}, n); });
//   std::string text = r.Render();                    // the exposition format (exposition.h)
//
// Thread-safety: everything is safe from any thread. Add* and With take a lock; Counter::Add and
// Histogram::Observe are atomic only. Pointers returned stay valid as long as the Registry.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/mutex.h"
#include "metrics/exposition.h"

namespace archil::metrics {

class Counter {
 public:
  void Add(uint64_t n = 1) { v_.fetch_add(n, std::memory_order_relaxed); }
  uint64_t value() const { return v_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> v_{0};
};

// Observations counted in buckets with fixed upper bounds (inclusive), plus their sum and count.
class Histogram {
 public:
  // REQUIRES: `bounds` strictly increasing.
  explicit Histogram(std::vector<double> bounds);
  void Observe(double v);
  struct Snapshot {
    std::vector<double> bounds;
    std::vector<uint64_t> cumulative;  // per bound, then +Inf (= count)
    double sum = 0;
  };
  Snapshot Read() const;

 private:
  const std::vector<double> bounds_;
  std::unique_ptr<std::atomic<uint64_t>[]> counts_;  // bounds_.size() + 1 (the last: above all)
  std::atomic<uint64_t> sum_nanos_{0};               // sum in units of 1e-9
};

// 50 µs to 10 s, for latencies in seconds.
std::vector<double> DefaultLatencyBounds();

// At scrape time: what a collector reports.
class Sink {
 public:
  explicit Sink(Writer* w) : w_(w) {}
  void Gauge(const std::string& name, const std::string& help, const LabelPairs& labels,
             double value);
  void Counter(const std::string& name, const std::string& help, const LabelPairs& labels,
               double value);
  // Several series of one family (a gauge per disk, say).
  void Family(const std::string& name, const std::string& help, Type type) {
    w_->Family(name, help, type);
  }
  void Sample(const std::string& name, const LabelPairs& labels, double value) {
    w_->Sample(name, labels, value);
  }

 private:
  Writer* const w_;
};

template <typename T>
class Family {
 public:
  Family(std::string name, std::string help, std::vector<std::string> label_names,
         std::function<std::unique_ptr<T>()> make)
      : name_(std::move(name)),
        help_(std::move(help)),
        label_names_(std::move(label_names)),
        make_(std::move(make)) {}
  // The series with these label values (in label_names order; missing ones are ""), made on
  // first use.
  T* With(std::vector<std::string> values) ARCHIL_EXCLUDES(mu_) {
    values.resize(label_names_.size());
    MutexLock lock(&mu_);
    std::unique_ptr<T>& slot = series_[values];
    if (!slot) slot = make_();
    return slot.get();
  }
  const std::string& name() const { return name_; }
  const std::string& help() const { return help_; }
  // Calls fn(labels, series) for each series, in label order.
  void ForEach(const std::function<void(const LabelPairs&, const T&)>& fn) const
      ARCHIL_EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    for (const auto& [values, series] : series_) {
      LabelPairs labels;
      for (size_t i = 0; i < values.size(); ++i) labels.emplace_back(label_names_[i], values[i]);
      fn(labels, *series);
    }
  }

 private:
  const std::string name_, help_;
  const std::vector<std::string> label_names_;
  const std::function<std::unique_ptr<T>()> make_;
  mutable Mutex mu_;
  std::map<std::vector<std::string>, std::unique_ptr<T>> series_ ARCHIL_GUARDED_BY(mu_);
};

using CounterFamily = Family<Counter>;
using HistogramFamily = Family<Histogram>;

class Registry {
 public:
  CounterFamily* AddCounter(std::string name, std::string help,
                            std::vector<std::string> label_names) ARCHIL_EXCLUDES(mu_);
  HistogramFamily* AddHistogram(std::string name, std::string help,
                                std::vector<std::string> label_names, std::vector<double> bounds)
      ARCHIL_EXCLUDES(mu_);
  // `collect` runs at every Render, on the scraping thread; it must not call into the Registry.
  void AddCollector(std::function<void(Sink&)> collect) ARCHIL_EXCLUDES(mu_);
  // Everything, in the exposition format: the families in the order added, then the collectors'.
  std::string Render() const ARCHIL_EXCLUDES(mu_);
  // The same as one JSON document (json_writer.h).
  std::string RenderJson() const ARCHIL_EXCLUDES(mu_);

 private:
  void RenderTo(Writer* w) const ARCHIL_EXCLUDES(mu_);
  mutable Mutex mu_;
  std::vector<std::unique_ptr<CounterFamily>> counters_ ARCHIL_GUARDED_BY(mu_);
  std::vector<std::unique_ptr<HistogramFamily>> histograms_ ARCHIL_GUARDED_BY(mu_);
  std::vector<std::function<void(Sink&)>> collectors_ ARCHIL_GUARDED_BY(mu_);
};

}  // namespace archil::metrics
