// Mutex and MutexLock annotated for clang's -Wthread-safety analysis.
//
// Declare the data a mutex protects with ARCHIL_GUARDED_BY(mu_) and functions that need it held
// with ARCHIL_REQUIRES(mu_); clang then checks the locking discipline at compile time. Under GCC
// the annotations compile to nothing and the types behave like std::mutex / std::lock_guard.
#pragma once

#include <cassert>
#include <condition_variable>
#include <mutex>

#if defined(__clang__)
#define ARCHIL_THREAD_ANNOTATION_(x) __attribute__((x))
#else
#define ARCHIL_THREAD_ANNOTATION_(x)
#endif

#define ARCHIL_CAPABILITY(x) ARCHIL_THREAD_ANNOTATION_(capability(x))
#define ARCHIL_SCOPED_CAPABILITY ARCHIL_THREAD_ANNOTATION_(scoped_lockable)
#define ARCHIL_GUARDED_BY(x) ARCHIL_THREAD_ANNOTATION_(guarded_by(x))
#define ARCHIL_PT_GUARDED_BY(x) ARCHIL_THREAD_ANNOTATION_(pt_guarded_by(x))
#define ARCHIL_REQUIRES(...) ARCHIL_THREAD_ANNOTATION_(requires_capability(__VA_ARGS__))
#define ARCHIL_EXCLUDES(...) ARCHIL_THREAD_ANNOTATION_(locks_excluded(__VA_ARGS__))
#define ARCHIL_ACQUIRE(...) ARCHIL_THREAD_ANNOTATION_(acquire_capability(__VA_ARGS__))
#define ARCHIL_RELEASE(...) ARCHIL_THREAD_ANNOTATION_(release_capability(__VA_ARGS__))
#define ARCHIL_ASSERT_CAPABILITY(x) ARCHIL_THREAD_ANNOTATION_(assert_capability(x))

namespace archil {

class ARCHIL_CAPABILITY("mutex") Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void Lock() ARCHIL_ACQUIRE() { mu_.lock(); }
  void Unlock() ARCHIL_RELEASE() { mu_.unlock(); }
  // Tells the analysis that the calling thread holds this mutex (not checked at run time). For
  // helpers whose constructor already REQUIRES the mutex through a pointer the analysis cannot
  // follow in later calls.
  void AssertHeld() const ARCHIL_ASSERT_CAPABILITY(this) {}

 private:
  friend class CondVar;
  std::mutex mu_;
};

// Holds a Mutex for its lifetime.
class ARCHIL_SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex* mu) ARCHIL_ACQUIRE(mu) : mu_(mu) { mu_->Lock(); }
  ~MutexLock() ARCHIL_RELEASE() { mu_->Unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex* const mu_;
};

// A condition variable bound to one Mutex. Wait and WaitFor name that mutex again so that clang
// can check it is held: the analysis cannot see that a CondVar's member is the caller's mutex.
class CondVar {
 public:
  explicit CondVar(Mutex* mu) : mu_(mu) {}
  // REQUIRES: *mu held. Atomically releases it, waits for a signal, re-acquires it.
  void Wait(Mutex* mu) ARCHIL_REQUIRES(mu) {
    assert(mu == mu_);
    std::unique_lock<std::mutex> lock(mu->mu_, std::adopt_lock);
    cv_.wait(lock);
    lock.release();
  }
  // REQUIRES: *mu held. As Wait(), but returns after `timeout` at the latest; false on timeout.
  template <typename Duration>
  bool WaitFor(Mutex* mu, Duration timeout) ARCHIL_REQUIRES(mu) {
    assert(mu == mu_);
    std::unique_lock<std::mutex> lock(mu->mu_, std::adopt_lock);
    bool signalled = cv_.wait_for(lock, timeout) == std::cv_status::no_timeout;
    lock.release();
    return signalled;
  }
  void Signal() { cv_.notify_one(); }
  void SignalAll() { cv_.notify_all(); }

 private:
  [[maybe_unused]] Mutex* const mu_;  // only read by assert()
  std::condition_variable cv_;
};

}  // namespace archil
