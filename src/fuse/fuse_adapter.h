// The FUSE adapter: libfuse 3's low-level operations, each one call on a MountCore and one reply
// (docs/semantics.md §5). This is the only code that includes libfuse's headers for requests;
// everything it knows of a disk is MountCore's.
//
// Thread-safety: the session runs libfuse's multi-threaded loop; MountCore is safe for that.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "base/mutex.h"
#include "base/status.h"
#include "fs/mount_core.h"

struct fuse_session;

namespace archil::fuse {

struct AdapterOptions {
  bool writeback_cache = true;    // FUSE_CAP_WRITEBACK_CACHE (exclusive mounts)
  uint32_t read_ahead_kb = 1024;  // 0: no kernel read-ahead
  double timeout_s = 86400;       // entry and attribute timeouts: this mount owns the disk
  std::string fs_name;            // "archil:<disk>", shown by mount(8) and df
  unsigned max_threads = 16;
};

struct AdapterStats {
  std::atomic<uint64_t> requests{0};
  std::atomic<uint64_t> in_flight{0};
  std::atomic<uint64_t> errors{0};  // replies with EIO (the server could not be reached)
  std::atomic<uint64_t> bytes_read{0};
  std::atomic<uint64_t> bytes_written{0};
};

// One mounted session. Mount() mounts `mountpoint` (as root: mount(2) directly), Run() serves
// requests until the file system is unmounted or Stop() is called.
class Adapter {
 public:
  // REQUIRES: `core` outlives this.
  Adapter(fs::MountCore* core, AdapterOptions options);
  ~Adapter();
  Adapter(const Adapter&) = delete;
  Adapter& operator=(const Adapter&) = delete;

  // Creates the session and mounts it. EACCES/EPERM if not root, ENODEV without FUSE.
  Status Mount(const std::string& mountpoint, bool read_only);
  // Serves until unmounted (or Stop()); returns once every worker ended.
  Status Run();
  // Waits until the kernel's INIT was answered (the mount is usable), up to `timeout_ms`.
  bool WaitReady(int timeout_ms) ARCHIL_EXCLUDES(ready_mu_);
  // Ends Run(): unmounts (lazily) so the kernel ends the connection.
  void Stop();

  AdapterStats& stats() { return stats_; }
  const AdapterOptions& options() const { return options_; }
  fs::MountCore* core() { return core_; }

  // Called by the init handler.
  void MarkReady() ARCHIL_EXCLUDES(ready_mu_);

 private:
  fs::MountCore* const core_;
  const AdapterOptions options_;
  AdapterStats stats_;
  struct ::fuse_session* session_ = nullptr;
  std::string mountpoint_;
  std::atomic<bool> mounted_{false};
  Mutex ready_mu_;
  CondVar ready_cv_{&ready_mu_};
  bool ready_ ARCHIL_GUARDED_BY(ready_mu_) = false;
};

}  // namespace archil::fuse
