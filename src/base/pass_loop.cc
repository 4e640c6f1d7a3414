#include "base/pass_loop.h"

#include <chrono>

#include "base/log.h"
#include "base/thread_name.h"

namespace archil {

PassLoop::~PassLoop() { Stop(); }

void PassLoop::Stop() {
  {
    MutexLock lock(&mu_);
    stop_ = true;
    cv_.SignalAll();
  }
  if (thread_.joinable()) thread_.join();
}

void PassLoop::Start() {
  thread_ = std::thread([this] {
    NameThisThread(what_);
    Run();
  });
}

void PassLoop::Kick() {
  MutexLock lock(&mu_);
  kicked_ = true;
  cv_.Signal();
}

void PassLoop::Run() {
  bool failed = false;
  bool first = options_.first_at_start;
  for (;;) {
    {
      MutexLock lock(&mu_);
      if (!first && !stop_ && !kicked_) {
        const int wait_ms =
            failed && options_.retry_ms >= 0 ? options_.retry_ms : options_.interval_ms;
        cv_.WaitFor(&mu_, std::chrono::milliseconds(wait_ms));
      }
      if (!stop_ && kicked_ && options_.settle_ms > 0) {
        // Until the settle time is over, whatever kicks come meanwhile (each signals the cv).
        const auto until =
            std::chrono::steady_clock::now() + std::chrono::milliseconds(options_.settle_ms);
        for (auto now = std::chrono::steady_clock::now(); !stop_ && now < until;
             now = std::chrono::steady_clock::now()) {
          cv_.WaitFor(&mu_, until - now);
        }
      }
      if (stop_) return;
      kicked_ = false;
      first = false;
    }
    Status s = pass_();
    failed = !s.ok();
    if (failed) ARCHIL_LOG(kWarn) << what_ << " pass failed, will retry: " << s.ToString();
  }
}

}  // namespace archil
