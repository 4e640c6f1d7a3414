// ReadAhead: the mount's own read-ahead of files read in order (docs/semantics.md §5.11).
//
// The kernel reads ahead too, but one window at a time: between the moment the application has
// consumed a window and the moment the kernel's next READ reaches the server, nothing is in flight
// and the server's disk and the network idle. ReadAhead keeps them busy: once the READs of an inode
// follow each other, it reads the next `window` bytes from the disk in the background, in `chunk`
// sized reads, and answers the kernel's later READs from them (waiting for a chunk still in
// flight). Random reads cost nothing extra: an inode's first READ, and any READ away from where the
// last ones ended, go to the disk directly and start nothing.
//
// Coherence (the rule of docs/semantics.md §5.11: a read older than a change this mount made
// never answers a later READ). Every change of an inode's data or size this mount makes calls
// Invalidate(ino) both before it is sent and after it is answered: each call drops the inode's
// chunks and bumps its generation, and a background read stores its bytes only into a chunk that
// is still in the map. So a chunk either was read after the change was acknowledged, or is gone.
// A mount is the only writer of its disk (an exclusive mount; shared mounts are not built).
//
// Memory: chunks (in flight or read) take at most `max_bytes` in all; when full, no new chunk
// starts and READs go to the disk directly. A chunk is dropped once a READ has consumed its end
// (the kernel's page cache keeps what it read), when its inode is invalidated or forgotten, when
// the reader has passed it without reading it, or when a READ far from it shows the reader has
// moved.
//
// Thread-safety: safe for concurrent use. Background reads run on `threads` threads of its own;
// the destructor waits for those in flight. `fs` must be safe for concurrent use.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "base/mutex.h"
#include "base/status.h"
#include "posix/file_system.h"

namespace archil::fs {

struct ReadAheadOptions {
  size_t window = 0;  // bytes read ahead of the reader; 0: no read-ahead, every READ is direct
  size_t chunk = 1 << 20;
  size_t max_bytes = 64 << 20;
  int threads = 4;
};

struct ReadAheadStats {
  uint64_t hits = 0;            // READs answered from chunks
  uint64_t misses = 0;          // READs sent to the disk directly (after a failed chunk too)
  uint64_t chunks_read = 0;     // background reads that completed
  uint64_t chunks_failed = 0;   // background reads that failed
  uint64_t chunks_dropped = 0;  // chunks dropped before any READ used all of them
  uint64_t files_ahead = 0;     // files read ahead of their first READ (Prefetch)
  uint64_t bytes_cached = 0;    // now, in flight included
};

class ReadAhead {
 public:
  static constexpr size_t kMaxPrefetched = 128;

  // REQUIRES: `fs` outlives this; options.chunk > 0.
  ReadAhead(posix::FileSystem* fs, ReadAheadOptions options);
  ~ReadAhead();
  ReadAhead(const ReadAhead&) = delete;
  ReadAhead& operator=(const ReadAhead&) = delete;

  // What fs->Read(ino, offset, length) would return now (see Coherence above).
  Result<std::string> Read(posix::Ino ino, uint64_t offset, size_t length) ARCHIL_EXCLUDES(mu_);
  // Starts reading all of `ino`, a file of `size` bytes expected to be read next from its start,
  // unless something of it is held already or the memory bound is reached.
  void Prefetch(posix::Ino ino, uint64_t size) ARCHIL_EXCLUDES(mu_);
  // The file's size, as this mount last saw it: no chunk starts past it. A size out of date only
  // reads too little ahead (the kernel's READs past it go to the disk) or too much.
  void Sized(posix::Ino ino, uint64_t size) ARCHIL_EXCLUDES(mu_);
  // The inode's data or size is about to change, or has changed: drop what was read of it.
  void Invalidate(posix::Ino ino) ARCHIL_EXCLUDES(mu_);
  // The inode is no longer open here: drop everything kept for it.
  void Forget(posix::Ino ino) ARCHIL_EXCLUDES(mu_);

  ReadAheadStats stats() const ARCHIL_EXCLUDES(mu_);

 private:
  struct Chunk {
    uint64_t ino = 0;
    uint64_t offset = 0;
    size_t length = 0;  // asked for
    // Guarded by the ReadAhead's mu_ (not annotated: a Chunk does not know its owner).
    bool done = false;     // status and data are set
    bool attached = true;  // still in its inode's map
    Status status;         // not ok: the read failed, or the chunk was dropped before it began
    std::string data;      // what the disk returned (shorter than `length` at the end of the file)
  };
  // A stream no READ has reached yet (frontier 0) holds chunks only if Prefetch started them.
  struct Stream {
    uint64_t frontier = 0;  // where the READs seen so far end
    uint64_t ahead = 0;     // where the chunks end (0: none started)
    bool at_eof = false;    // a chunk came back short: nothing past it to read
    std::map<uint64_t, std::shared_ptr<Chunk>> chunks;  // by offset
  };

  // Starts chunks from s.ahead up to `until`, within the memory bound.
  void StartChunks(uint64_t ino, Stream* s, uint64_t until) ARCHIL_REQUIRES(mu_);
  void Drop(Stream* s, std::map<uint64_t, std::shared_ptr<Chunk>>::iterator it)
      ARCHIL_REQUIRES(mu_);
  void DropAll(Stream* s) ARCHIL_REQUIRES(mu_);
  // The chunks that cover [offset, offset+length) in order, or none if they do not.
  std::vector<std::shared_ptr<Chunk>> Covering(Stream* s, uint64_t offset, size_t length)
      ARCHIL_REQUIRES(mu_);
  void MarkEof(const Chunk& c) ARCHIL_REQUIRES(mu_);
  void Work() ARCHIL_EXCLUDES(mu_);

  posix::FileSystem* const fs_;
  const ReadAheadOptions options_;

  mutable Mutex mu_;
  CondVar work_cv_{&mu_};  // queue_ grew, or stopping_
  CondVar done_cv_{&mu_};  // a chunk completed
  std::unordered_map<uint64_t, Stream> streams_ ARCHIL_GUARDED_BY(mu_);
  std::deque<std::shared_ptr<Chunk>> queue_ ARCHIL_GUARDED_BY(mu_);
  std::deque<uint64_t> prefetched_ ARCHIL_GUARDED_BY(mu_);  // in the order Prefetch started them
  std::unordered_map<uint64_t, uint64_t> sizes_ ARCHIL_GUARDED_BY(mu_);  // Sized, by inode
  size_t bytes_ ARCHIL_GUARDED_BY(mu_) = 0;
  bool stopping_ ARCHIL_GUARDED_BY(mu_) = false;
  ReadAheadStats stats_ ARCHIL_GUARDED_BY(mu_);
  std::vector<std::thread> threads_;
};

}  // namespace archil::fs
