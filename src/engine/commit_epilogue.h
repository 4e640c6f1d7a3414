// CommitEpilogue: a write that must share the batch of the calling thread's next file-system
// mutation, made from that mutation's result. It is how the disk server keeps its reply cache
// exactly-once (docs/protocol.md §7): the slot record answering a request is written in the same
// WriteBatch as the operation, so after a crash both are there or neither is.
//
// The posix::FileSystem interface has no room for it, and should not: the reference model and
// the tests know nothing of sessions. So the caller installs the epilogue on its thread
// (EpilogueScope) and then calls the operation; the DiskFs operation takes it on the caller's
// thread before queueing its prepare, and the prepare (which may run on another caller's thread,
// commit_queue.h) runs it after its own writes succeeded. A failed operation runs no epilogue.
// Only the first commit of an operation takes it (an unlink's later purge of an unreferenced
// inode does not).
//
// Thread-safety: the installed epilogue is per thread.
#pragma once

#include <functional>

#include "engine/commit_queue.h"
#include "posix/types.h"

namespace archil::engine {

// What the operation produced, for the epilogue to answer from.
struct CommitResult {
  // The operation's attributes for those that return them (create, write, setattr, link, ...);
  // nullptr for the others (unlink, rename, xattrs, fallocate, checkpoint).
  const posix::Attr* attr = nullptr;
  // A checkpoint's frozen epoch and creation time (0 for the others).
  uint64_t checkpoint_epoch = 0;
  int64_t checkpoint_created_ns = 0;
};
using CommitEpilogue = std::function<void(Txn& txn, const CommitResult& result)>;

// Installs `epilogue` for the calling thread's next mutation until the scope ends.
// REQUIRES: no other scope is active on this thread.
class EpilogueScope {
 public:
  explicit EpilogueScope(CommitEpilogue epilogue);
  ~EpilogueScope();  // uninstalls it if no mutation took it
  EpilogueScope(const EpilogueScope&) = delete;
  EpilogueScope& operator=(const EpilogueScope&) = delete;
};

// Installs `on_queued` for the calling thread's next mutation until the scope ends: it runs as
// soon as that mutation's commit has its place in the queue (CommitQueue::Commit's on_queued),
// before it is durable. Only the operation's first commit takes it, as for the epilogue. The
// disk server uses it to let the next write to the same file start (ADR 0015).
// REQUIRES: no other OnQueuedScope is active on this thread.
class OnQueuedScope {
 public:
  explicit OnQueuedScope(std::function<void()> on_queued);
  ~OnQueuedScope();  // uninstalls it if no mutation took it
  OnQueuedScope(const OnQueuedScope&) = delete;
  OnQueuedScope& operator=(const OnQueuedScope&) = delete;
};

// Engine internals: the calling thread's epilogue, uninstalled; empty if none.
CommitEpilogue TakeEpilogue();
// Engine internals: the calling thread's on_queued hook, uninstalled; empty if none.
std::function<void()> TakeOnQueued();

}  // namespace archil::engine
