// Must NOT compile under the clang-tsa preset: proves that -Wthread-safety is on and that the
// annotations in base/mutex.h are checked (ctest thread_safety_analysis_rejects_misuse).
#include <chrono>

#include "base/mutex.h"

namespace archil {

class Counter {
 public:
  void IncrementUnlocked() { ++n_; }  // error: writing n_ requires holding mu_
  void WaitUnlocked() { cv_.WaitFor(&mu_, std::chrono::milliseconds(1)); }  // error: needs mu_

 private:
  Mutex mu_;
  CondVar cv_{&mu_};
  int n_ ARCHIL_GUARDED_BY(mu_) = 0;
};

}  // namespace archil
