#include "control/handler_pool.h"

#include <string>

#include "base/thread_name.h"

namespace archil {

HandlerPool::HandlerPool(size_t threads, size_t max_queued) : max_queued_(max_queued) {
  if (threads == 0) threads = 1;
  for (size_t i = 0; i < threads; ++i) {
    threads_.emplace_back([this, i] {
      NameThisThread("http-" + std::to_string(i));
      Run();
    });
  }
}

HandlerPool::~HandlerPool() {
  {
    MutexLock lock(&mu_);
    stopping_ = true;
  }
  cv_.SignalAll();
  for (std::thread& t : threads_) t.join();
}

bool HandlerPool::Submit(std::function<void()> task) {
  {
    MutexLock lock(&mu_);
    if (stopping_ || queue_.size() >= max_queued_) return false;
    queue_.push_back(std::move(task));
  }
  cv_.Signal();
  return true;
}

void HandlerPool::Run() {
  for (;;) {
    std::function<void()> task;
    {
      MutexLock lock(&mu_);
      while (queue_.empty() && !stopping_) cv_.Wait(&mu_);
      if (queue_.empty()) return;
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    task();
  }
}

}  // namespace archil
