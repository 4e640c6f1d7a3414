// Progress of a long operation (a recovery from the bucket), for a person watching a terminal.
//
// `Progress` is what the operation reports to; `TerminalProgress` shows it as one line that
// rewrites itself, and only on a terminal: a log file or a pipe gets nothing from it (the
// operation logs its own summary when it ends), so a service's journal is not filled with
// hundreds of updates and escape codes.
//
// Thread-safety: Progress::Update may be called from any thread (an operation that works with
// several threads reports from each).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "base/clock.h"
#include "base/mutex.h"

namespace archil {

class Progress {
 public:
  virtual ~Progress() = default;
  // `task` has done `done` of `total` steps (total 0: not known), moving `bytes` so far (0: the
  // task moves no data). A new `task` starts a new line.
  virtual void Update(std::string_view task, uint64_t done, uint64_t total, uint64_t bytes) = 0;
};

// "segments 12 of 80 (15 %), 1.2 GiB at 156 MB/s, about 58 s left" after `elapsed_ns` of the task:
// the percentage and the time left only when the total is known and something is done, the rate
// only after 0.5 s (before that it is noise).
std::string FormatProgress(std::string_view task, uint64_t done, uint64_t total, uint64_t bytes,
                           int64_t elapsed_ns);

class TerminalProgress final : public Progress {
 public:
  // A Progress that shows on `fd` if it is a terminal, else nullptr (report to nothing).
  static std::unique_ptr<TerminalProgress> IfTerminal(int fd, std::string prefix,
                                                      const Clock* clock);
  // Shows on `fd` whatever it is (tests), each line "\r<prefix>: <progress>\x1b[K", at most one
  // every `interval_ms` but always the first and last of a task. A task's line ends when its
  // count reaches its total (what follows starts on a line of its own), or at the next task or
  // Finish().
  TerminalProgress(int fd, std::string prefix, const Clock* clock, int64_t interval_ms = 200);
  ~TerminalProgress() override;  // Finish()

  void Update(std::string_view task, uint64_t done, uint64_t total, uint64_t bytes) override
      ARCHIL_EXCLUDES(mu_);
  // Shows the last update in full and ends its line; the next Update starts a new one.
  void Finish() ARCHIL_EXCLUDES(mu_);

 private:
  void ShowLocked(int64_t now) ARCHIL_REQUIRES(mu_);

  const int fd_;
  const std::string prefix_;
  const Clock* const clock_;
  const int64_t interval_ns_;
  Mutex mu_;
  std::string task_ ARCHIL_GUARDED_BY(mu_);
  uint64_t done_ ARCHIL_GUARDED_BY(mu_) = 0;
  uint64_t total_ ARCHIL_GUARDED_BY(mu_) = 0;
  uint64_t bytes_ ARCHIL_GUARDED_BY(mu_) = 0;
  int64_t started_ ARCHIL_GUARDED_BY(mu_) = 0;    // the task's first update, monotonic ns
  int64_t shown_ ARCHIL_GUARDED_BY(mu_) = 0;      // the last line written; 0: none of this task
  bool open_ ARCHIL_GUARDED_BY(mu_) = false;      // a line was written and not yet ended
  bool pending_ ARCHIL_GUARDED_BY(mu_) = false;   // the last update is not on screen yet
  bool complete_ ARCHIL_GUARDED_BY(mu_) = false;  // done reached total: the line has ended
};

}  // namespace archil
