#include "control/after_reply.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cassert>
#include <utility>

#include "base/thread_name.h"

namespace archil {

namespace {
thread_local AfterReplyScope* current = nullptr;
}  // namespace

AfterReplyRunner::AfterReplyRunner(size_t max_queued)
    : max_queued_(max_queued), thread_([this] { Loop(); }) {}

AfterReplyRunner::~AfterReplyRunner() {
  {
    MutexLock lock(&mu_);
    stopping_ = true;
  }
  cv_.SignalAll();
  thread_.join();
}

bool AfterReplyRunner::Post(std::function<void()>& work) {
  {
    MutexLock lock(&mu_);
    if (stopping_ || queue_.size() >= max_queued_) return false;
    queue_.push_back(std::move(work));
  }
  cv_.Signal();
  return true;
}

void AfterReplyRunner::Loop() {
  NameThisThread("after-reply");
  // Below the threads that answer requests, so a reply's reader runs first on a busy CPU. Best
  // effort: a failure leaves the thread at the process's priority.
  (void)setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), 10);
  for (;;) {
    std::function<void()> work;
    {
      MutexLock lock(&mu_);
      while (queue_.empty() && !stopping_) cv_.Wait(&mu_);
      if (queue_.empty()) return;
      work = std::move(queue_.front());
      queue_.pop_front();
    }
    work();
  }
}

AfterReplyScope::AfterReplyScope(AfterReplyRunner* runner) : runner_(runner) {
  assert(current == nullptr);
  current = this;
}

AfterReplyScope::~AfterReplyScope() {
  Run();
  current = nullptr;
}

void AfterReplyScope::Run() {
  // Work run here that defers more runs at once: the scope is not taking new work while it runs.
  current = nullptr;
  for (size_t i = 0; i < work_.size(); ++i) {
    if (runner_ == nullptr || !runner_->Post(work_[i])) work_[i]();
  }
  work_.clear();
  current = this;
}

void Defer(std::function<void()> work) {
  if (current == nullptr) {
    work();
    return;
  }
  current->work_.push_back(std::move(work));
}

}  // namespace archil
