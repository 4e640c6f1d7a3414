// Journal: the mount daemon's log, to journald under one identifier (`archil-<disk id>`), read
// with `journalctl -t archil-<disk id>`. It speaks journald's native datagram protocol on
// /run/systemd/journal/socket (no libsystemd); when no journald listens there (machines without
// systemd), every line goes to the daemon's standard error instead, which `archil mount` points at
// a log file beside the mount's record.
//
// Thread-safety: safe for concurrent use; each line is one datagram or one write.
#pragma once

#include <string>
#include <string_view>

namespace archil::mount {

class Journal {
 public:
  // syslog priorities: 3 error, 4 warning, 6 info.
  enum Priority { kError = 3, kWarning = 4, kInfo = 6 };

  // `socket_path`: journald's native socket (tests point it elsewhere).
  explicit Journal(std::string identifier, std::string socket_path = "/run/systemd/journal/socket");
  ~Journal();
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;

  void Log(Priority priority, std::string_view message);
  void Info(std::string_view m) { Log(kInfo, m); }
  void Warning(std::string_view m) { Log(kWarning, m); }
  void Error(std::string_view m) { Log(kError, m); }

  // The datagram for one line (journald's format: KEY=value lines; a value with a newline is
  // sent in the binary form, its length as 64-bit little endian).
  static std::string Datagram(std::string_view identifier, Priority priority,
                              std::string_view message);

 private:
  const std::string identifier_;
  const std::string socket_path_;
  int fd_ = -1;
};

}  // namespace archil::mount
