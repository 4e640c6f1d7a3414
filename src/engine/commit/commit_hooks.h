// CommitHooks: what a caller of a file-system mutation attaches to that mutation's commit.
//
// The disk server keeps its reply cache exactly-once (docs/protocol.md §7) by writing the slot
// record that answers a request in the same WriteBatch as the operation, so that after a crash
// both are there or neither is: that record is the `epilogue`, made from the operation's result
// inside its prepare (which may run on another caller's thread, commit_queue.h) after the
// operation's own writes succeeded. A failed operation runs no epilogue. And a WRITE lets the next
// mutation of its file start as soon as its commit has its place in the queue (ADR 0015): that is
// `on_queued`.
//
// The posix::FileSystem interface has no room for hooks, and should not: the reference model and
// the tests know nothing of sessions. DiskFs's mutations take them as a last argument
// (engine/fs/disk_fs.h); only the operation's own commit runs them (an unlink's later purge of an
// unreferenced inode does not).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>

#include "engine/commit/commit_queue.h"
#include "posix/types.h"

namespace archil::engine {

// What a change of names did to directories, after it: what a client that alone changes the disk
// may answer the next GETATTR of them with, and what it must forget (docs/protocol.md §5.4).
struct Touched {
  std::optional<posix::Attr> parent;      // the directory whose entries changed
  std::optional<posix::Attr> new_parent;  // rename: the target's directory, when it differs
  std::optional<posix::Ino> removed_dir;  // rmdir: the directory removed
  std::optional<posix::Attr> unlinked;    // unlink: the inode, after it lost the name
  bool purged = false;                    // unlink: ... and went with it (no holder kept it)
  std::optional<posix::Attr> moved;       // rename: the inode moved (exchange: the source's)
  std::optional<posix::Attr> replaced;    // rename: the inode replaced or exchanged, if any
};

// What the operation produced, for the epilogue to answer from.
struct CommitResult {
  // The operation's attributes for those that return them (create, write, setattr, link, ...);
  // nullptr for the others (unlink, rename, xattrs, fallocate, checkpoint).
  const posix::Attr* attr = nullptr;
  // A checkpoint's frozen epoch and creation time (0 for the others).
  uint64_t checkpoint_epoch = 0;
  int64_t checkpoint_created_ns = 0;
  // An inode grant's first number (DiskFs::GrantInos; 0 for the others).
  uint64_t granted_first = 0;
  // The changes of names (create, link, unlink, rmdir, rename); nullptr for the others, and
  // empty when the change was none (a rename onto another name of the same inode).
  const Touched* touched = nullptr;
};
using CommitEpilogue = std::function<void(Txn& txn, const CommitResult& result)>;

struct CommitHooks {
  // Runs inside the operation's prepare, after its writes succeeded, writing into the same batch.
  CommitEpilogue epilogue = nullptr;
  // Runs as soon as the operation's commit has its place in the queue (CommitQueue::Commit's
  // on_queued), before it is durable; not at all if the operation fails before it is queued.
  std::function<void()> on_queued = nullptr;
  // false: the operation returns once its commit is written, before the WAL sync
  // (CommitQueue::Commit's `sync`); it is durable after the next DiskFs::Sync, or the engine's
  // syncer's pass (intent_sync_ms), and never without what was committed before it.
  bool sync = true;
};

}  // namespace archil::engine
