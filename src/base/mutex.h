// Mutex and MutexLock annotated for clang's -Wthread-safety analysis.
//
// Declare the data a mutex protects with ARCHIL_GUARDED_BY(mu_) and functions that need it held
// with ARCHIL_REQUIRES(mu_); clang then checks the locking discipline at compile time. Under GCC
// the annotations compile to nothing and the types behave like std::mutex / std::lock_guard.
#pragma once

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

namespace archil {

class ARCHIL_CAPABILITY("mutex") Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void Lock() ARCHIL_ACQUIRE() { mu_.lock(); }
  void Unlock() ARCHIL_RELEASE() { mu_.unlock(); }

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

// A condition variable bound to one Mutex.
class CondVar {
 public:
  explicit CondVar(Mutex* mu) : mu_(mu) {}
  // REQUIRES: *mu held. Atomically releases it, waits for a signal, re-acquires it.
  void Wait() ARCHIL_REQUIRES(mu_) {
    std::unique_lock<std::mutex> lock(mu_->mu_, std::adopt_lock);
    cv_.wait(lock);
    lock.release();
  }
  // REQUIRES: *mu held. As Wait(), but returns after `timeout` at the latest; false on timeout.
  template <typename Duration>
  bool WaitFor(Duration timeout) ARCHIL_REQUIRES(mu_) {
    std::unique_lock<std::mutex> lock(mu_->mu_, std::adopt_lock);
    bool signalled = cv_.wait_for(lock, timeout) == std::cv_status::no_timeout;
    lock.release();
    return signalled;
  }
  void Signal() { cv_.notify_one(); }
  void SignalAll() { cv_.notify_all(); }

 private:
  Mutex* const mu_;
  std::condition_variable cv_;
};

}  // namespace archil
