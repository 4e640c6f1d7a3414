// Cancellation of a blocking call by whoever asked for it, seen through a thread-local scope.
//
// The FUSE adapter serves each request on a worker thread; a process blocked in that request
// and then killed cannot die until the request is answered (the kernel waits uninterruptibly
// for a reply the daemon has begun). So the worker sets a CancelScope whose check says whether
// the calling process is being killed, and the disk client's waits (for a server, a reply or a
// free slot) poll the current scope and give up with Cancelled.
//
// Thread-safety: a scope belongs to the thread that made it; Check() may be called from it only.
#pragma once

namespace archil {

class CancelCheck {
 public:
  virtual ~CancelCheck() = default;
  // Whether the work on behalf of this caller should stop. Called at most every few tens of
  // milliseconds, while waiting; may read /proc.
  virtual bool Cancelled() const = 0;
};

// Makes `check` the calling thread's current check until destroyed (scopes nest).
class CancelScope {
 public:
  explicit CancelScope(const CancelCheck* check) : previous_(current_) { current_ = check; }
  ~CancelScope() { current_ = previous_; }
  CancelScope(const CancelScope&) = delete;
  CancelScope& operator=(const CancelScope&) = delete;

  // The thread's current check, or nullptr.
  static const CancelCheck* Current() { return current_; }
  // Whether the current check (if any) says to stop.
  static bool CurrentCancelled() { return current_ != nullptr && current_->Cancelled(); }

 private:
  const CancelCheck* const previous_;
  static inline thread_local const CancelCheck* current_ = nullptr;
};

}  // namespace archil
