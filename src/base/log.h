// Logging: levelled, streamed, one process-wide sink.
//
//   ARCHIL_LOG(kInfo) << "listening on " << addr;
//
// The stream expression is not evaluated when the level is disabled. Lines go to a LogSink
// (stderr by default); the mount daemon installs a journald sink later. Never log credentials.
// Thread-safety: all functions may be called from any thread; SetLogSink() is meant for start-up.
#pragma once

#include <atomic>
#include <memory>
#include <sstream>
#include <string_view>

#include "base/status.h"

namespace archil {

enum class LogLevel { kTrace = 0, kDebug, kInfo, kWarn, kError, kOff };

// "trace|debug|info|warn|error|off" -> level.
Result<LogLevel> ParseLogLevel(std::string_view name);
std::string_view LogLevelName(LogLevel level);

class LogSink {
 public:
  virtual ~LogSink() = default;
  // One complete line without the trailing newline. Called concurrently; must be thread-safe.
  virtual void Write(LogLevel level, std::string_view line) = 0;
};

// Writes "2026-11-30T03:24:25.123Z I file.cc:12] message" lines to stderr.
std::unique_ptr<LogSink> MakeStderrSink();

void SetLogLevel(LogLevel level);
LogLevel GetLogLevel();
// Replaces the process-wide sink. Lines logged concurrently may still reach the old one.
void SetLogSink(std::unique_ptr<LogSink> sink);

inline std::atomic<int> g_log_level{static_cast<int>(LogLevel::kInfo)};
inline bool LogEnabled(LogLevel level) {
  return static_cast<int>(level) >= g_log_level.load(std::memory_order_relaxed);
}

// One log line, emitted by the destructor.
class LogMessage {
 public:
  LogMessage(LogLevel level, const char* file, int line);
  ~LogMessage();
  LogMessage(const LogMessage&) = delete;
  LogMessage& operator=(const LogMessage&) = delete;
  std::ostream& stream() { return out_; }

 private:
  LogLevel level_;
  std::ostringstream out_;
};

// Binds looser than << and tighter than ?:, so the whole stream expression is one operand.
struct LogVoidify {
  void operator&(std::ostream&) {}
};

}  // namespace archil

#define ARCHIL_LOG(level)                          \
  !::archil::LogEnabled(::archil::LogLevel::level) \
      ? (void)0                                    \
      : ::archil::LogVoidify() &                   \
            ::archil::LogMessage(::archil::LogLevel::level, __FILE__, __LINE__).stream()
