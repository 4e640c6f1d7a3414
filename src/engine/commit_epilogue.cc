#include "engine/commit_epilogue.h"

#include <utility>

namespace archil::engine {

namespace {
thread_local CommitEpilogue installed;
}

EpilogueScope::EpilogueScope(CommitEpilogue epilogue) { installed = std::move(epilogue); }

EpilogueScope::~EpilogueScope() { installed = nullptr; }

CommitEpilogue TakeEpilogue() { return std::exchange(installed, nullptr); }

}  // namespace archil::engine
