#include "control/after_reply.h"

#include <cassert>
#include <utility>

namespace archil {

namespace {
thread_local AfterReplyScope* current = nullptr;
}  // namespace

AfterReplyScope::AfterReplyScope() {
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
  for (size_t i = 0; i < work_.size(); ++i) work_[i]();
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
