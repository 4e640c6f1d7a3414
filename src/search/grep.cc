#include "search/grep.h"

#include <re2/re2.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <deque>
#include <memory>
#include <optional>
#include <thread>

#include "base/mutex.h"

namespace archil::search {

std::string_view StopReasonName(StopReason r) {
  switch (r) {
    case StopReason::kCompleted:
      return "completed";
    case StopReason::kIncomplete:
      return "incomplete";
    case StopReason::kMaxResults:
      return "max_results";
    case StopReason::kDeadline:
      return "deadline";
    case StopReason::kListFailed:
      return "list_failed";
  }
  return "completed";
}

namespace {

constexpr size_t kBinaryProbeBytes = 8192;
constexpr size_t kQueuedFiles = 4096;  // files listed ahead of the searchers
constexpr size_t kListPage = 1024;

Status CheckRequest(const GrepRequest& r) {
  if (r.pattern.empty()) return Status::InvalidArgument("the pattern is empty");
  if (r.pattern.size() > kMaxPatternBytes) {
    return Status::InvalidArgument("the pattern is over " + std::to_string(kMaxPatternBytes) +
                                   " bytes");
  }
  if (r.max_duration_ms < 1 || r.max_duration_ms > 3'600'000) {
    return Status::InvalidArgument("maxDurationSeconds must be 1 to 3600");
  }
  if (r.concurrency < 1 || r.concurrency > kMaxConcurrency) {
    return Status::InvalidArgument("concurrency must be 1 to " + std::to_string(kMaxConcurrency));
  }
  if (r.max_results < 1 || r.max_results > kMaxResults) {
    return Status::InvalidArgument("maxResults must be 1 to " + std::to_string(kMaxResults));
  }
  return Status::Ok();
}

RE2::Options PatternOptions() {
  RE2::Options o;
  o.set_log_errors(false);
  o.set_max_mem(kMaxProgramBytes);
  return o;
}

// The two compiled forms of one pattern: `line` matches one line (its ^ and $ are the line's
// ends); `text` finds the next candidate in a buffer of many lines ((?m): ^ and $ at every line).
struct Pattern {
  std::unique_ptr<RE2> line;
  std::unique_ptr<RE2> text;
};

Result<Pattern> Compile(const std::string& pattern) {
  Pattern p;
  p.line = std::make_unique<RE2>(pattern, PatternOptions());
  if (!p.line->ok()) {
    return Status::InvalidArgument("the pattern does not compile: " + p.line->error());
  }
  p.text = std::make_unique<RE2>("(?m)" + pattern, PatternOptions());
  if (!p.text->ok()) {
    return Status::InvalidArgument("the pattern does not compile: " + p.text->error());
  }
  return p;
}

// `directory` as an inode: each component looked up from the root. "." and ".." are refused, so
// the walk never leaves the tree it names.
Result<posix::Ino> Resolve(posix::FileSystem* fs, std::string_view path, std::string* normal) {
  posix::Ino ino = posix::kRootIno;
  normal->clear();
  size_t i = 0;
  while (i <= path.size()) {
    size_t j = path.find('/', i);
    if (j == std::string_view::npos) j = path.size();
    std::string_view name = path.substr(i, j - i);
    i = j + 1;
    if (name.empty()) continue;
    if (name == "." || name == "..") {
      return Status::InvalidArgument("the directory may not hold '.' or '..'");
    }
    ARCHIL_ASSIGN_OR_RETURN(posix::Attr a, fs->Lookup(ino, name));
    ino = a.ino;
    normal->append("/").append(name);
  }
  ARCHIL_ASSIGN_OR_RETURN(posix::Attr a, fs->GetAttr(ino));
  if (!S_ISDIR(a.mode))
    return Status::Errno(ENOTDIR, "'" + std::string(path) + "' is not a directory");
  return ino;
}

// The newlines in [p, p + n), eight bytes at a time (a byte of w ^ "\n\n..." is zero where w
// held a newline; the classic has-zero-byte test marks each such byte's top bit, exactly).
uint64_t CountNewlines(const char* p, size_t n) {
  constexpr uint64_t kNl = 0x0a0a0a0a0a0a0a0aULL, kLow7 = 0x7f7f7f7f7f7f7f7fULL;
  uint64_t count = 0;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    const uint64_t x = w ^ kNl;
    const uint64_t zero = ~(((x & kLow7) + kLow7) | x | kLow7);
    count += ((zero >> 7) * 0x0101010101010101ULL) >> 56;  // the marks summed in the top byte
  }
  for (; i < n; ++i) count += p[i] == '\n';
  return count;
}

struct FileJob {
  posix::Ino ino;
  std::string path;
};

// The state one Grep shares between its lister (the calling thread) and its searchers.
class Search {
 public:
  Search(posix::FileSystem* fs, const GrepRequest& r, const Pattern* p, const Clock* clock)
      : fs_(fs), r_(r), p_(p), clock_(clock), queue_cv_(&mu_), space_cv_(&mu_) {
    deadline_ns_ = clock->MonotonicNanos() + r.max_duration_ms * 1'000'000;
  }

  GrepResult Run(posix::Ino dir, const std::string& path) {
    const int64_t start = clock_->MonotonicNanos();
    std::vector<std::thread> searchers;
    for (int i = 0; i < r_.concurrency; ++i) searchers.emplace_back([this] { SearchFiles(); });
    List(dir, path);
    {
      MutexLock lock(&mu_);
      listed_all_ = true;
    }
    queue_cv_.SignalAll();
    for (std::thread& t : searchers) t.join();

    GrepResult out;
    MutexLock lock(&mu_);
    out.matches = std::move(matches_);
    std::sort(out.matches.begin(), out.matches.end(), [](const GrepMatch& a, const GrepMatch& b) {
      return a.file != b.file ? a.file < b.file : a.line < b.line;
    });
    if (out.matches.size() > r_.max_results) out.matches.resize(r_.max_results);
    out.files_scanned = files_scanned_;
    out.stopped = reason_.value_or(list_failed_   ? StopReason::kListFailed
                                   : read_failed_ ? StopReason::kIncomplete
                                                  : StopReason::kCompleted);
    out.duration_ms = (clock_->MonotonicNanos() - start) / 1'000'000;
    return out;
  }

 private:
  bool Stopped() {
    if (stopped_.load(std::memory_order_relaxed)) return true;
    if (clock_->MonotonicNanos() < deadline_ns_) return false;
    Stop(StopReason::kDeadline);
    return true;
  }

  // stopped_ is set under mu_, so that a waiter that saw it false under mu_ is already waiting
  // when the signals come (no lost wake-up: a lister blocked on a full queue would wait for ever).
  void Stop(StopReason why) {
    {
      MutexLock lock(&mu_);
      if (!reason_) reason_ = why;
      stopped_.store(true);
    }
    queue_cv_.SignalAll();
    space_cv_.SignalAll();
  }

  // Breadth first, so that a deadline leaves the shallow files searched.
  void List(posix::Ino top, const std::string& top_path) {
    std::deque<FileJob> dirs{{top, top_path}};
    while (!dirs.empty() && !Stopped()) {
      FileJob dir = std::move(dirs.front());
      dirs.pop_front();
      uint64_t cookie = 0;
      for (bool eof = false; !eof && !Stopped();) {
        Result<posix::DirPage> page = fs_->ReadDir(dir.ino, cookie, kListPage);
        if (!page.ok()) {
          MutexLock lock(&mu_);
          list_failed_ = true;
          break;
        }
        eof = page->eof || page->entries.empty();
        for (posix::DirEntry& e : page->entries) {
          cookie = e.cookie;
          if (e.name == "." || e.name == "..") continue;
          std::string path = dir.path + "/" + e.name;
          if (e.type == S_IFDIR) {
            if (r_.recursive) dirs.push_back({e.ino, std::move(path)});
          } else if (e.type == S_IFREG) {
            Enqueue({e.ino, std::move(path)});
          }
        }
      }
    }
  }

  void Enqueue(FileJob job) {
    MutexLock lock(&mu_);
    while (queue_.size() >= kQueuedFiles && !stopped_.load()) space_cv_.Wait(&mu_);
    if (stopped_.load()) return;
    queue_.push_back(std::move(job));
    queue_cv_.Signal();
  }

  std::optional<FileJob> Next() {
    MutexLock lock(&mu_);
    while (queue_.empty() && !listed_all_ && !stopped_.load()) queue_cv_.Wait(&mu_);
    if (queue_.empty() || stopped_.load()) return std::nullopt;
    FileJob job = std::move(queue_.front());
    queue_.pop_front();
    space_cv_.Signal();
    return job;
  }

  void SearchFiles() {
    std::vector<GrepMatch> found;
    while (std::optional<FileJob> job = Next()) {
      found.clear();
      const Searched done = SearchFile(*job, &found);
      MutexLock lock(&mu_);
      if (done.any) ++files_scanned_;
      if (!done.read_ok) read_failed_ = true;
      for (GrepMatch& m : found) matches_.push_back(std::move(m));
    }
  }

  struct Searched {
    bool any = false;     // some of the file was searched (it counts as scanned)
    bool read_ok = true;  // no read failed
  };
  // Searches one file, until its end, a failed read (what was read before is searched), or the
  // search's stop.
  Searched SearchFile(const FileJob& job, std::vector<GrepMatch>* found) {
    Searched out;
    std::string carry;  // the start of a line the last read did not finish
    uint64_t offset = 0, line_no = 1;
    for (;;) {
      if (Stopped()) return out;
      Result<std::string> data = fs_->Read(job.ino, offset, kReadBytes);
      if (!data.ok()) {
        out.read_ok = false;
        return out;
      }
      out.any = true;
      const bool eof = data->size() < kReadBytes;
      if (offset == 0 &&
          std::memchr(data->data(), '\0', std::min(data->size(), kBinaryProbeBytes)) != nullptr) {
        return out;  // binary
      }
      offset += data->size();
      std::string buf;
      if (carry.empty()) {
        buf = std::move(*data);
      } else {
        buf = std::move(carry);
        buf += *data;
      }
      carry.clear();
      size_t done = SearchLines(job.path, buf, eof, &line_no, found);
      if (Stopped() || eof) return out;
      carry.assign(buf, done, std::string::npos);
      if (carry.size() >= kMaxLineBytes) {  // an overlong line: searched in pieces
        SearchLines(job.path, carry, /*last=*/true, &line_no, found);
        carry.clear();
      }
    }
  }

  // Searches the whole lines of `buf` (and its unterminated tail if `last`); returns where the
  // first line not searched starts. `*line_no` is the number of buf's first line; unless `last`,
  // it moves on to the number of the line at the returned offset. Newlines are counted only up
  // to a match, and past the last one only if more of the file follows.
  size_t SearchLines(const std::string& path, std::string_view buf, bool last, uint64_t* line_no,
                     std::vector<GrepMatch>* found) {
    const size_t end = last ? buf.size() : buf.rfind('\n') + 1;  // npos + 1 == 0: no whole line
    std::string_view text = buf.substr(0, end);
    size_t pos = 0, counted = 0;  // lines before `counted` are numbered
    while (pos < text.size()) {
      re2::StringPiece hit;
      if (!p_->text->Match(text, pos, text.size(), RE2::UNANCHORED, &hit, 1)) break;
      const size_t at = static_cast<size_t>(hit.data() - text.data());
      const size_t line_start = at == 0 ? 0 : text.rfind('\n', at - 1) + 1;
      size_t line_end = text.find('\n', at);
      if (line_end == std::string_view::npos) line_end = text.size();
      *line_no += CountNewlines(text.data() + counted, line_start - counted);
      counted = line_start;
      std::string_view line = text.substr(line_start, line_end - line_start);
      // A match of the whole text may have crossed a newline ((?s), \s, [^x]): the line alone
      // decides.
      if (RE2::PartialMatch(line, *p_->line)) {
        found->push_back({path, *line_no, std::string(line.substr(0, kMaxTextBytes))});
        // Counted across the searchers, so that together they hold at most about max_results
        // lines (each up to kMaxTextBytes), not max_results each.
        if (matched_.fetch_add(1) + 1 >= r_.max_results) {
          Stop(StopReason::kMaxResults);
          return end;
        }
      }
      pos = line_end + 1;
    }
    if (!last) *line_no += CountNewlines(text.data() + counted, text.size() - counted);
    return end;
  }

  posix::FileSystem* const fs_;
  const GrepRequest& r_;
  const Pattern* const p_;
  const Clock* const clock_;
  int64_t deadline_ns_ = 0;
  std::atomic<bool> stopped_{false};
  std::atomic<uint64_t> matched_{0};  // lines found by every searcher so far

  Mutex mu_;
  CondVar queue_cv_;  // a file was queued, or the listing ended, or the search stopped
  CondVar space_cv_;  // a file was taken, or the search stopped
  std::deque<FileJob> queue_ ARCHIL_GUARDED_BY(mu_);
  bool listed_all_ ARCHIL_GUARDED_BY(mu_) = false;
  bool list_failed_ ARCHIL_GUARDED_BY(mu_) = false;
  bool read_failed_ ARCHIL_GUARDED_BY(mu_) = false;
  std::optional<StopReason> reason_ ARCHIL_GUARDED_BY(mu_);
  uint64_t files_scanned_ ARCHIL_GUARDED_BY(mu_) = 0;
  std::vector<GrepMatch> matches_ ARCHIL_GUARDED_BY(mu_);
};

}  // namespace

Result<GrepResult> Grep(posix::FileSystem* fs, const GrepRequest& request, const Clock* clock) {
  ARCHIL_RETURN_IF_ERROR(CheckRequest(request));
  ARCHIL_ASSIGN_OR_RETURN(Pattern pattern, Compile(request.pattern));
  std::string path;
  ARCHIL_ASSIGN_OR_RETURN(posix::Ino dir, Resolve(fs, request.directory, &path));
  Search search(fs, request, &pattern, clock);
  return search.Run(dir, path);
}

}  // namespace archil::search
