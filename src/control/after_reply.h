// After the reply: work an API handler leaves until its response is on its way.
//
// A handler of the HTTP server runs inside an AfterReplyScope; Defer() there queues the work, and
// the scope's Run() (or its destructor) performs it on the same thread once the response has been
// handed to the connection's I/O thread. Outside any scope (tests that call ControlService
// directly, start-up) Defer() runs the work at once. Used for what the catalog's commit already
// acknowledged and a later step would only delay (docs/adr/0010-catalog-and-engine-truth.md: the
// engine's copy of a new disk).
//
// A scope given an AfterReplyRunner hands its work to the runner's thread instead, which runs at a
// lower CPU priority: on a small machine the deferred work (a RocksDB write of ~0.15 ms) then no
// longer competes with the client that is about to read the response (ADR 0026).
//
// Thread-safety: the scope and its queue belong to the calling thread; AfterReplyRunner::Post may
// be called from any thread.
#pragma once

#include <deque>
#include <functional>
#include <thread>
#include <vector>

#include "base/mutex.h"

namespace archil {

// One background thread, at nice +10 (Linux sets niceness per thread; raising it needs no
// privilege), that runs posted work in the order posted. The destructor runs what is queued,
// then joins.
class AfterReplyRunner {
 public:
  explicit AfterReplyRunner(size_t max_queued = 4096);
  ~AfterReplyRunner();
  AfterReplyRunner(const AfterReplyRunner&) = delete;
  AfterReplyRunner& operator=(const AfterReplyRunner&) = delete;

  // Queues `work`; false (and `work` left to the caller) when max_queued already wait or the
  // runner is stopping.
  bool Post(std::function<void()>& work);

 private:
  void Loop();

  const size_t max_queued_;
  Mutex mu_;
  CondVar cv_{&mu_};
  std::deque<std::function<void()>> queue_ ARCHIL_GUARDED_BY(mu_);
  bool stopping_ ARCHIL_GUARDED_BY(mu_) = false;
  std::thread thread_;  // last: started once the rest is built
};

class AfterReplyScope {
 public:
  // REQUIRES: no other AfterReplyScope is active on this thread. `runner`, if given, runs the
  // work (else this thread does, in Run()); it must outlive the scope.
  explicit AfterReplyScope(AfterReplyRunner* runner = nullptr);
  ~AfterReplyScope();  // runs what is still queued
  AfterReplyScope(const AfterReplyScope&) = delete;
  AfterReplyScope& operator=(const AfterReplyScope&) = delete;

  // Runs the queued work, in the order it was deferred (work deferred meanwhile included), or
  // hands it to the runner (what the runner refuses runs here).
  void Run();

 private:
  AfterReplyRunner* const runner_;
  std::vector<std::function<void()>> work_;
  friend void Defer(std::function<void()> work);
};

// Queues `work` in this thread's AfterReplyScope, or runs it now if there is none.
void Defer(std::function<void()> work);

}  // namespace archil
