// ControlServer: the mount daemon's end of the control socket (api/mount_control.h). A thread
// accepts one connection at a time, checks the peer is root or the daemon's own user, reads one
// request line (at most 64 KiB, within 5 s), answers it through the handler and closes.
//
// Thread-safety: Start and Stop from one thread; the handler runs on the server's thread.
#pragma once

#include <functional>
#include <string>
#include <thread>

#include "api/mount_control.h"
#include "base/status.h"

namespace archil::mount {

class ControlServer {
 public:
  using Handler = std::function<ControlReply(const ControlRequest&)>;
  ControlServer(std::string path, Handler handler)
      : path_(std::move(path)), handler_(std::move(handler)) {}
  ~ControlServer() { Stop(); }

  // Binds the socket (replacing a stale one), mode 0600, and starts serving.
  Status Start();
  // Stops serving and removes the socket.
  void Stop();

 private:
  void Loop();
  void Serve(int fd);

  const std::string path_;
  const Handler handler_;
  int listen_fd_ = -1;
  int wake_fd_[2] = {-1, -1};
  std::thread thread_;
};

}  // namespace archil::mount
