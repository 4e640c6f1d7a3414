#include "tier/pass_loop.h"

#include <chrono>

#include "base/log.h"
#include "base/thread_name.h"

namespace archil::tier {

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
  for (;;) {
    {
      MutexLock lock(&mu_);
      if (!stop_ && !kicked_) cv_.WaitFor(&mu_, std::chrono::milliseconds(interval_ms_));
      if (stop_) return;
      kicked_ = false;
    }
    Status s = pass_();
    if (!s.ok()) ARCHIL_LOG(kWarn) << "tier: " << what_ << " pass: " << s.ToString();
  }
}

}  // namespace archil::tier
