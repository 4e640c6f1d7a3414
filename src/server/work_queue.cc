#include "server/work_queue.h"

#include <utility>

namespace archil::server {

WorkQueue::WorkQueue(int threads) {
  for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { Loop(); });
}

WorkQueue::~WorkQueue() {
  {
    MutexLock lock(&mu_);
    stop_ = true;
    ready_.SignalAll();
  }
  for (std::thread& t : threads_) t.join();
}

void WorkQueue::Push(std::function<void()> job) {
  MutexLock lock(&mu_);
  jobs_.push_back(std::move(job));
  ready_.Signal();
}

void WorkQueue::Loop() {
  while (true) {
    std::function<void()> job;
    {
      MutexLock lock(&mu_);
      while (jobs_.empty() && !stop_) ready_.Wait(&mu_);
      if (jobs_.empty()) return;
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    job();
  }
}

}  // namespace archil::server
