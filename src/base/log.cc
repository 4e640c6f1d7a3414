#include "base/log.h"

#include <unistd.h>

#include <cstring>
#include <mutex>
#include <string>

#include "base/clock.h"

namespace archil {
namespace {

class StderrSink final : public LogSink {
 public:
  void Write(LogLevel, std::string_view line) override {
    std::string buf(line);
    buf.push_back('\n');
    // One write(2) per line so concurrent lines do not interleave.
    ssize_t unused = ::write(STDERR_FILENO, buf.data(), buf.size());
    (void)unused;
  }
};

std::mutex g_sink_mu;
std::shared_ptr<LogSink>& Sink() {
  static std::shared_ptr<LogSink> sink = MakeStderrSink();
  return sink;
}

std::shared_ptr<LogSink> CurrentSink() {
  std::lock_guard<std::mutex> lock(g_sink_mu);
  return Sink();
}

}  // namespace

Result<LogLevel> ParseLogLevel(std::string_view name) {
  static constexpr std::string_view kNames[] = {"trace", "debug", "info", "warn", "error", "off"};
  for (int i = 0; i < 6; ++i) {
    if (name == kNames[i]) return static_cast<LogLevel>(i);
  }
  return Status::InvalidArgument("unknown log level '" + std::string(name) +
                                 "' (use trace, debug, info, warn, error or off)");
}

std::string_view LogLevelName(LogLevel level) {
  static constexpr std::string_view kNames[] = {"trace", "debug", "info", "warn", "error", "off"};
  return kNames[static_cast<int>(level)];
}

std::unique_ptr<LogSink> MakeStderrSink() { return std::make_unique<StderrSink>(); }

void SetLogLevel(LogLevel level) { g_log_level.store(static_cast<int>(level)); }
LogLevel GetLogLevel() { return static_cast<LogLevel>(g_log_level.load()); }

void SetLogSink(std::unique_ptr<LogSink> sink) {
  std::lock_guard<std::mutex> lock(g_sink_mu);
  Sink() = std::move(sink);
}

LogMessage::LogMessage(LogLevel level, const char* file, int line) : level_(level) {
  static constexpr char kLetters[] = "TDIWE";
  const char* base = std::strrchr(file, '/');
  out_ << FormatRfc3339(SystemClock::Instance().NowMicros()) << ' '
       << kLetters[static_cast<int>(level)] << ' ' << (base ? base + 1 : file) << ':' << line
       << "] ";
}

LogMessage::~LogMessage() { CurrentSink()->Write(level_, out_.str()); }

}  // namespace archil
