#include "base/progress.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <iterator>

namespace archil {
namespace {

constexpr int64_t kNanosPerSecond = 1000000000;
constexpr int64_t kRateAfterNs = kNanosPerSecond / 2;

// "812 B", "4.0 KiB", "1.2 GiB": one decimal from KiB on.
std::string Bytes(double v, const char* suffix) {
  static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  size_t u = 0;
  while (v >= 1024 && u + 1 < std::size(kUnits)) {
    v /= 1024;
    ++u;
  }
  char buf[48];
  if (u == 0) {
    std::snprintf(buf, sizeof buf, "%.0f %s%s", v, kUnits[u], suffix);
  } else {
    std::snprintf(buf, sizeof buf, "%.1f %s%s", v, kUnits[u], suffix);
  }
  return buf;
}

// Writes all of `s` unless the terminal is gone (then the progress is lost, never the work).
void WriteAll(int fd, const std::string& s) {
  size_t off = 0;
  while (off < s.size()) {
    const ssize_t n = ::write(fd, s.data() + off, s.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    off += static_cast<size_t>(n);
  }
}

}  // namespace

std::string FormatProgress(std::string_view task, uint64_t done, uint64_t total, uint64_t bytes,
                           int64_t elapsed_ns) {
  std::string out(task);
  char buf[96];
  if (total > 0) {
    std::snprintf(buf, sizeof buf, " %" PRIu64 " of %" PRIu64 " (%" PRIu64 " %%)", done, total,
                  done >= total ? 100 : done * 100 / total);
  } else {
    std::snprintf(buf, sizeof buf, " %" PRIu64, done);
  }
  out += buf;
  if (bytes > 0) {
    out += ", " + Bytes(static_cast<double>(bytes), "");
    if (elapsed_ns >= kRateAfterNs) {
      out += " at " +
             Bytes(static_cast<double>(bytes) * kNanosPerSecond / static_cast<double>(elapsed_ns),
                   "/s");
    }
  }
  if (total > 0 && done > 0 && done < total && elapsed_ns >= kRateAfterNs) {
    const double left_s = static_cast<double>(elapsed_ns) / kNanosPerSecond *
                          static_cast<double>(total - done) / static_cast<double>(done);
    std::snprintf(buf, sizeof buf, ", about %.0f s left", left_s < 1 ? 1 : left_s);
    out += buf;
  }
  return out;
}

std::unique_ptr<TerminalProgress> TerminalProgress::IfTerminal(int fd, std::string prefix,
                                                               const Clock* clock) {
  if (::isatty(fd) != 1) return nullptr;
  return std::make_unique<TerminalProgress>(fd, std::move(prefix), clock);
}

TerminalProgress::TerminalProgress(int fd, std::string prefix, const Clock* clock,
                                   int64_t interval_ms)
    : fd_(fd), prefix_(std::move(prefix)), clock_(clock), interval_ns_(interval_ms * 1000000) {}

TerminalProgress::~TerminalProgress() { Finish(); }

void TerminalProgress::Update(std::string_view task, uint64_t done, uint64_t total,
                              uint64_t bytes) {
  MutexLock lock(&mu_);
  const int64_t now = clock_->MonotonicNanos();
  if (task != task_) {
    if (open_) {
      if (pending_) ShowLocked(now);
      WriteAll(fd_, "\n");
    }
    task_ = std::string(task);
    done_ = bytes_ = 0;
    started_ = now;
    shown_ = 0;
    open_ = pending_ = complete_ = false;
  }
  if (complete_) return;  // a slower thread's report after the last one
  // Threads report out of order: a count never goes back on screen.
  done_ = std::max(done_, done);
  bytes_ = std::max(bytes_, bytes);
  total_ = total;
  pending_ = true;
  const bool last = total > 0 && done_ >= total;
  if (shown_ == 0 || last || now - shown_ >= interval_ns_) ShowLocked(now);
  if (last) {
    // Ended at once, so that what the operation logs next starts on a line of its own.
    WriteAll(fd_, "\n");
    open_ = false;
    complete_ = true;
  }
}

void TerminalProgress::Finish() {
  MutexLock lock(&mu_);
  if (pending_) ShowLocked(clock_->MonotonicNanos());
  if (open_) WriteAll(fd_, "\n");
  open_ = pending_ = complete_ = false;
  task_.clear();
  done_ = total_ = bytes_ = 0;
}

void TerminalProgress::ShowLocked(int64_t now) {
  WriteAll(fd_, "\r" + prefix_ + ": " +
                    FormatProgress(task_, done_, total_, bytes_, now - started_) + "\x1b[K");
  shown_ = now == 0 ? 1 : now;
  open_ = true;
  pending_ = false;
}

}  // namespace archil
