// After the reply: work an API handler leaves until its response is on its way.
//
// A handler of the HTTP server runs inside an AfterReplyScope; Defer() there queues the work, and
// the scope's Run() (or its destructor) performs it on the same thread once the response has been
// handed to the connection's I/O thread. Outside any scope (tests that call ControlService
// directly, start-up) Defer() runs the work at once. Used for what the catalog's commit already
// acknowledged and a later step would only delay (docs/adr/0010-catalog-and-engine-truth.md: the
// engine's copy of a new disk).
//
// Thread-safety: the scope and its queue belong to the calling thread.
#pragma once

#include <functional>
#include <vector>

namespace archil {

class AfterReplyScope {
 public:
  // REQUIRES: no other AfterReplyScope is active on this thread.
  AfterReplyScope();
  ~AfterReplyScope();  // runs what is still queued
  AfterReplyScope(const AfterReplyScope&) = delete;
  AfterReplyScope& operator=(const AfterReplyScope&) = delete;

  // Runs the queued work, in the order it was deferred (work deferred meanwhile included).
  void Run();

 private:
  std::vector<std::function<void()>> work_;
  friend void Defer(std::function<void()> work);
};

// Queues `work` in this thread's AfterReplyScope, or runs it now if there is none.
void Defer(std::function<void()> work);

}  // namespace archil
