// WorkQueue: a fixed pool of threads that run queued jobs in arrival order (the disk server's
// request workers). A job may block (a synced commit): the pool is sized for the number of
// requests that should wait on the disk together, so that their commits share a WAL sync.
//
// Thread-safety: safe for concurrent use.
#pragma once

#include <deque>
#include <functional>
#include <thread>
#include <vector>

#include "base/mutex.h"

namespace archil::server {

class WorkQueue {
 public:
  explicit WorkQueue(int threads);
  ~WorkQueue();  // runs the jobs already queued, then joins
  WorkQueue(const WorkQueue&) = delete;
  WorkQueue& operator=(const WorkQueue&) = delete;

  void Push(std::function<void()> job) ARCHIL_EXCLUDES(mu_);

 private:
  void Loop() ARCHIL_EXCLUDES(mu_);

  Mutex mu_;
  CondVar ready_{&mu_};
  std::deque<std::function<void()>> jobs_ ARCHIL_GUARDED_BY(mu_);
  bool stop_ ARCHIL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;
};

}  // namespace archil::server
