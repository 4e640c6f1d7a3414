// HandlerPool: a fixed set of threads that run the API router's handlers, which block (a SQLite
// commit with fsync is ~1 ms), so that the HTTP server's I/O threads never do. Bounded: Submit
// refuses work beyond max_queued waiting tasks (the server answers 503 then).
//
// Thread-safety: Submit may be called from any thread. The destructor runs the tasks already
// queued, then joins the threads.
#pragma once

#include <cstddef>
#include <deque>
#include <functional>
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

  // Queues `task`; false (and `task` dropped) when max_queued tasks already wait.
  bool Submit(std::function<void()> task);

 private:
  void Run();

  const size_t max_queued_;
  Mutex mu_;
  CondVar cv_{&mu_};
  std::deque<std::function<void()>> queue_ ARCHIL_GUARDED_BY(mu_);
  bool stopping_ ARCHIL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;
};

}  // namespace archil
