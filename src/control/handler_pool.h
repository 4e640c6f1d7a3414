// HandlerPool: a fixed set of threads that run the API router's handlers, which block (a SQLite
// commit with fsync is ~1 ms), so that the HTTP server's I/O threads never do. Bounded: Submit
// refuses work beyond max_queued waiting tasks (the server answers 503 then).
//
// A task goes to the thread that became idle last (a stack, not a queue of idle threads): at the
// rates an API sees, one or two threads then do all the work with warm caches and thread-local
// state (OpenSSL's, malloc's), where a condition variable's FIFO wake-ups took every thread of
// the pool in turn, each cold.
//
// Thread-safety: Submit may be called from any thread. The destructor runs the tasks already
// queued, then joins the threads.
#pragma once

#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "base/mutex.h"

namespace archil {

class HandlerPool {
 public:
  HandlerPool(size_t threads, size_t max_queued);
  ~HandlerPool();
  HandlerPool(const HandlerPool&) = delete;
  HandlerPool& operator=(const HandlerPool&) = delete;

  // Hands `task` to an idle thread, else queues it; false (and `task` dropped) when max_queued
  // tasks already wait.
  bool Submit(std::function<void()> task);
  // The threads idle now (waiting for a task).
  size_t idle() const ARCHIL_EXCLUDES(mu_);

 private:
  struct Worker {
    explicit Worker(Mutex* mu) : wake(mu) {}
    CondVar wake;
    std::function<void()> task;  // handed over by Submit while the worker was idle
  };

  void Run(Worker* self);

  const size_t max_queued_;
  mutable Mutex mu_;
  std::deque<std::function<void()>> queue_ ARCHIL_GUARDED_BY(mu_);  // no thread was idle
  std::vector<Worker*> idle_ ARCHIL_GUARDED_BY(mu_);                // the last to idle on top
  bool stopping_ ARCHIL_GUARDED_BY(mu_) = false;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::vector<std::thread> threads_;
};

}  // namespace archil
