#include "fs/read_ahead.h"

#include <algorithm>
#include <cerrno>
#include <utility>

#include "base/thread_name.h"

namespace archil::fs {

namespace {
// A bound on the inodes followed at once; past it the idle ones (no chunk) are forgotten.
constexpr size_t kMaxStreams = 4096;
// A bound on the file sizes kept; past it all are forgotten.
constexpr size_t kMaxSizes = size_t{1} << 16;
}  // namespace

ReadAhead::ReadAhead(posix::FileSystem* fs, ReadAheadOptions options) : fs_(fs), options_(options) {
  if (options_.window == 0) return;
  for (int i = 0; i < options_.threads; ++i)
    threads_.emplace_back([this] {
      NameThisThread("read-ahead");
      Work();
    });
}

ReadAhead::~ReadAhead() {
  {
    MutexLock lock(&mu_);
    stopping_ = true;
    for (auto& [ino, s] : streams_) DropAll(&s);
    queue_.clear();
    work_cv_.SignalAll();
  }
  for (std::thread& t : threads_) t.join();
}

Result<std::string> ReadAhead::Read(posix::Ino ino, uint64_t offset, size_t length) {
  if (options_.window == 0 || length == 0) return fs_->Read(ino, offset, length);
  std::vector<std::shared_ptr<Chunk>> parts;
  {
    MutexLock lock(&mu_);
    if (streams_.size() >= kMaxStreams && !streams_.contains(ino.value())) {
      std::erase_if(streams_, [](const auto& kv) { return kv.second.chunks.empty(); });
    }
    Stream& s = streams_[ino.value()];
    const uint64_t end = offset + length;
    // In order: this READ starts near where the others ended (the kernel sends a window's READs
    // in parallel, so they may arrive a little out of order), or within a file read ahead of it.
    const bool prefetched = s.frontier == 0 && !s.chunks.empty();
    const bool in_order = prefetched
                              ? offset < s.ahead
                              : s.frontier != 0 && offset + 2 * options_.chunk >= s.frontier &&
                                    offset <= s.frontier + options_.chunk;
    if (!in_order) {
      DropAll(&s);
      s.at_eof = false;
    }
    s.frontier = std::max(s.frontier, end);
    // Chunks the reader has passed, beyond the reordering allowed above, will not be read.
    while (!s.chunks.empty()) {
      auto first = s.chunks.begin();
      if (first->first + first->second->length + 2 * options_.chunk > offset) break;
      ++stats_.chunks_dropped;
      Drop(&s, first);
    }
    parts = Covering(&s, offset, length);
    // Nothing is read past the file's end, when this mount knows where it is.
    auto size = sizes_.find(ino.value());
    const uint64_t known_end = size != sizes_.end() ? size->second : UINT64_MAX;
    if (in_order && !s.at_eof && end < known_end) {
      if (s.ahead < end) s.ahead = end;
      StartChunks(ino.value(), &s, std::min(end + options_.window, known_end));
    }
    if (parts.empty()) ++stats_.misses;
  }
  if (parts.empty()) return fs_->Read(ino, offset, length);

  std::string out;
  out.reserve(length);
  {
    MutexLock lock(&mu_);
    for (const std::shared_ptr<Chunk>& c : parts) {
      while (!c->done) done_cv_.Wait(&mu_);
    }
    for (const std::shared_ptr<Chunk>& c : parts) {
      if (!c->status.ok()) {
        out.clear();
        break;
      }
      const uint64_t from = std::max(offset, c->offset) - c->offset;
      if (from >= c->data.size()) break;  // the file ends before
      const size_t n =
          std::min<uint64_t>(c->data.size() - from, offset + length - c->offset - from);
      out.append(c->data, from, n);
      if (c->data.size() < c->length) break;  // the file ends in this chunk
    }
    // Chunks whose end this READ consumed, or the end of the file in them, are done with (the
    // kernel caches what it read).
    auto it = streams_.find(ino.value());
    if (it != streams_.end()) {
      Stream& s = it->second;
      for (const std::shared_ptr<Chunk>& c : parts) {
        const bool short_read = c->status.ok() && c->data.size() < c->length;
        const uint64_t used = c->offset + (short_read ? c->data.size() : c->length);
        if (c->attached && used <= offset + length) {
          auto at = s.chunks.find(c->offset);
          if (at != s.chunks.end() && at->second == c) Drop(&s, at);
        }
      }
    }
    const bool failed =
        std::any_of(parts.begin(), parts.end(), [](const auto& c) { return !c->status.ok(); });
    if (!failed) {
      ++stats_.hits;
      return out;
    }
    ++stats_.misses;
  }
  // A background read failed: ask again, so that the error (or a success) is this READ's own.
  return fs_->Read(ino, offset, length);
}

void ReadAhead::Prefetch(posix::Ino ino, uint64_t size) {
  if (options_.window == 0 || size == 0) return;
  // One chunk a page longer than the file's pages (what the kernel asks for): it comes back short,
  // and so covers every READ up to the file's end.
  constexpr uint64_t kPage = 4096;
  const uint64_t length = (size + kPage - 1) / kPage * kPage + kPage;
  MutexLock lock(&mu_);
  if (streams_.contains(ino.value())) return;  // being read, or read ahead already
  while (prefetched_.size() >= kMaxPrefetched) {
    auto it = streams_.find(prefetched_.front());
    prefetched_.pop_front();
    if (it != streams_.end() && it->second.frontier == 0 && !it->second.chunks.empty()) {
      DropAll(&it->second);  // still unread: the reader went elsewhere
      streams_.erase(it);
    }
  }
  if (bytes_ + length > options_.max_bytes) return;
  Stream& s = streams_[ino.value()];
  // The file's end is taken from its size: no chunk starts past it (a file that grew since is
  // read from the disk past the chunk, as a file never read ahead).
  s.at_eof = true;
  auto c = std::make_shared<Chunk>();
  c->ino = ino.value();
  c->offset = 0;
  c->length = length;
  s.chunks.emplace(0, c);
  s.ahead = length;
  bytes_ += length;
  queue_.push_back(std::move(c));
  prefetched_.push_back(ino.value());
  ++stats_.files_ahead;
  work_cv_.Signal();
}

void ReadAhead::Sized(posix::Ino ino, uint64_t size) {
  if (options_.window == 0) return;
  MutexLock lock(&mu_);
  if (sizes_.size() >= kMaxSizes && !sizes_.contains(ino.value())) sizes_.clear();
  sizes_[ino.value()] = size;
}

void ReadAhead::Invalidate(posix::Ino ino) {
  if (options_.window == 0) return;
  MutexLock lock(&mu_);
  auto it = streams_.find(ino.value());
  if (it == streams_.end()) return;
  DropAll(&it->second);
  it->second.at_eof = false;
}

void ReadAhead::Forget(posix::Ino ino) {
  if (options_.window == 0) return;
  MutexLock lock(&mu_);
  auto it = streams_.find(ino.value());
  if (it == streams_.end()) return;
  DropAll(&it->second);
  streams_.erase(it);
}

ReadAheadStats ReadAhead::stats() const {
  MutexLock lock(&mu_);
  ReadAheadStats s = stats_;
  s.bytes_cached = bytes_;
  return s;
}

void ReadAhead::StartChunks(uint64_t ino, Stream* s, uint64_t until) {
  while (s->ahead < until && bytes_ + options_.chunk <= options_.max_bytes) {
    auto c = std::make_shared<Chunk>();
    c->ino = ino;
    c->offset = s->ahead;
    c->length = options_.chunk;
    s->chunks.emplace(c->offset, c);
    s->ahead += c->length;
    bytes_ += c->length;
    queue_.push_back(std::move(c));
    work_cv_.Signal();
  }
}

void ReadAhead::Drop(Stream* s, std::map<uint64_t, std::shared_ptr<Chunk>>::iterator it) {
  Chunk& c = *it->second;
  c.attached = false;
  bytes_ -= c.length;
  s->chunks.erase(it);
}

void ReadAhead::DropAll(Stream* s) {
  for (auto& [offset, c] : s->chunks) {
    c->attached = false;
    bytes_ -= c->length;
    ++stats_.chunks_dropped;
  }
  s->chunks.clear();
  s->ahead = 0;
  s->frontier = 0;
}

std::vector<std::shared_ptr<ReadAhead::Chunk>> ReadAhead::Covering(Stream* s, uint64_t offset,
                                                                   size_t length) {
  std::vector<std::shared_ptr<Chunk>> parts;
  const uint64_t end = offset + length;
  auto it = s->chunks.upper_bound(offset);
  if (it == s->chunks.begin()) return {};
  --it;  // the chunk at or before `offset`
  uint64_t at = offset;
  while (at < end) {
    if (it == s->chunks.end() || it->first > at || it->first + it->second->length <= at) return {};
    parts.push_back(it->second);
    at = it->first + it->second->length;
    ++it;
  }
  return parts;
}

void ReadAhead::Work() {
  mu_.Lock();
  for (;;) {
    while (!stopping_ && queue_.empty()) work_cv_.Wait(&mu_);
    if (stopping_) break;
    std::shared_ptr<Chunk> c = std::move(queue_.front());
    queue_.pop_front();
    if (!c->attached) {
      // Dropped before it started: a READ that found it before then reads directly instead.
      c->done = true;
      c->status = Status::Errno(EAGAIN, "read-ahead dropped");
      done_cv_.SignalAll();
      continue;
    }
    mu_.Unlock();
    Result<std::string> r = fs_->Read(posix::Ino(c->ino), c->offset, c->length);
    mu_.Lock();
    c->done = true;
    if (!r.ok()) {
      c->status = r.status();
      ++stats_.chunks_failed;
    } else {
      c->data = std::move(r.value());
      ++stats_.chunks_read;
      if (c->attached && c->data.size() < c->length) MarkEof(*c);
    }
    done_cv_.SignalAll();
  }
  mu_.Unlock();
}

void ReadAhead::MarkEof(const Chunk& c) {
  // The file ends in `c`: read nothing past it until the reader moves or the file changes.
  auto it = streams_.find(c.ino);
  if (it == streams_.end()) return;
  Stream& s = it->second;
  s.at_eof = true;
  for (auto at = s.chunks.upper_bound(c.offset); at != s.chunks.end();) {
    at->second->attached = false;
    bytes_ -= at->second->length;
    ++stats_.chunks_dropped;
    at = s.chunks.erase(at);
  }
  s.ahead = c.offset + c.length;
}

}  // namespace archil::fs
