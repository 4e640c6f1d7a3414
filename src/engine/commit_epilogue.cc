#include "engine/commit_epilogue.h"

#include <utility>

namespace archil::engine {

namespace {
thread_local CommitEpilogue installed;
thread_local std::function<void()> installed_on_queued;
}  // namespace

EpilogueScope::EpilogueScope(CommitEpilogue epilogue) { installed = std::move(epilogue); }

EpilogueScope::~EpilogueScope() { installed = nullptr; }

CommitEpilogue TakeEpilogue() { return std::exchange(installed, nullptr); }

OnQueuedScope::OnQueuedScope(std::function<void()> on_queued) {
  installed_on_queued = std::move(on_queued);
}

OnQueuedScope::~OnQueuedScope() { installed_on_queued = nullptr; }

std::function<void()> TakeOnQueued() { return std::exchange(installed_on_queued, nullptr); }

}  // namespace archil::engine
