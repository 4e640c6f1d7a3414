#include "control/handler_pool.h"

#include <string>

#include "base/thread_name.h"

namespace archil {

HandlerPool::HandlerPool(size_t threads, size_t max_queued) : max_queued_(max_queued) {
  if (threads == 0) threads = 1;
  for (size_t i = 0; i < threads; ++i) workers_.push_back(std::make_unique<Worker>(&mu_));
  for (size_t i = 0; i < threads; ++i) {
    threads_.emplace_back([this, i] {
      NameThisThread("http-" + std::to_string(i));
      Run(workers_[i].get());
    });
  }
}

HandlerPool::~HandlerPool() {
  {
    MutexLock lock(&mu_);
    stopping_ = true;
    for (Worker* w : idle_) w->wake.Signal();
  }
  for (std::thread& t : threads_) t.join();
}

size_t HandlerPool::idle() const {
  MutexLock lock(&mu_);
  return idle_.size();
}

bool HandlerPool::Submit(std::function<void()> task) {
  Worker* worker = nullptr;
  {
    MutexLock lock(&mu_);
    if (stopping_) return false;
    if (idle_.empty()) {
      if (queue_.size() >= max_queued_) return false;
      queue_.push_back(std::move(task));
      return true;  // a busy thread takes it when it is done
    }
    worker = idle_.back();
    idle_.pop_back();
    worker->task = std::move(task);
    // Signalled under the lock: once it is released the worker may run, finish and be gone.
    worker->wake.Signal();
  }
  return true;
}

void HandlerPool::Run(Worker* self) {
  mu_.Lock();
  for (;;) {
    std::function<void()> task;
    if (self->task) {
      task = std::move(self->task);
      self->task = nullptr;
    } else if (!queue_.empty()) {
      task = std::move(queue_.front());
      queue_.pop_front();
    } else if (stopping_) {
      break;
    } else {
      idle_.push_back(self);
      while (!self->task && !stopping_) self->wake.Wait(&mu_);
      if (!self->task) {
        // Stopping: leave the idle stack (Submit refuses work now), then drain the queue.
        std::erase(idle_, self);
      }
      continue;
    }
    mu_.Unlock();
    task();
    task = nullptr;  // destroyed outside the lock, as it ran
    mu_.Lock();
  }
  mu_.Unlock();
}

}  // namespace archil
