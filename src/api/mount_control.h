// The mount control socket: how the CLI asks a running mount daemon to act on its mount
// (`archil checkpoints create MOUNTPOINT NAME`), docs/protocol.md §14.
//
// One AF_UNIX stream socket per mount, <run dir>/mounts/<16 hex>.sock (a keyed hash of the mount
// point, so the path fits sun_path), mode 0600, owned by the daemon's user; the daemon also
// checks the peer's uid (root or its own). One request per connection: a JSON object on one line
// ({"v": 1, "op": "checkpoint_create", "name": "cp-1"}), one JSON line back
// ({"ok": true, "checkpoint_name": ..., "status": "committed", "created_at_ns": ..., "epoch": ...}
// or {"ok": false, "errno": 17, "error": "..."}). JSON rather than the disk protocol's frames
// keeps the CLI free of protobuf (docs/adr/0001-binary-split.md); "v" versions it.
//
// Thread-safety: pure functions over values.
#pragma once

#include <sys/socket.h>
#include <sys/un.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace archil {

inline constexpr int kMountControlVersion = 1;
inline constexpr size_t kMaxControlLine = 64 * 1024;         // a request
inline constexpr size_t kMaxControlReply = 4 * 1024 * 1024;  // a reply (metrics are the longest)

// The socket of the daemon serving `mountpoint` (absolute, normalized).
std::string MountControlPath(const std::string& run_dir, const std::string& mountpoint);

// An AF_UNIX address for `path`. A path too long for sun_path (a deep run directory) is reached
// through /proc/self/fd/<directory fd>/<name>, so the directory stays open while it is used.
class UnixAddress {
 public:
  static Result<UnixAddress> For(const std::string& path);
  UnixAddress(UnixAddress&& o) noexcept : addr_(o.addr_), dir_fd_(o.dir_fd_) { o.dir_fd_ = -1; }
  UnixAddress& operator=(UnixAddress&&) = delete;
  ~UnixAddress();
  const sockaddr* addr() const { return reinterpret_cast<const sockaddr*>(&addr_); }
  socklen_t size() const { return sizeof(addr_); }

 private:
  UnixAddress() = default;
  sockaddr_un addr_{};
  int dir_fd_ = -1;
};

struct ControlRequest {
  std::string op;      // "checkpoint_create" or "metrics"
  std::string name;    // checkpoint_create: the checkpoint's name
  std::string format;  // metrics: "text" (the Prometheus exposition format) or "json"
};

struct ControlReply {
  Status status;  // the daemon's answer; on failure an errno and its message
  std::string checkpoint_name;
  std::string checkpoint_status = "committed";
  int64_t created_at_ns = 0;
  uint64_t epoch = 0;
  // metrics: the mount's metrics in the format asked (never empty in a metrics reply).
  std::string metrics;
};

// The refusal of checkpoint_create on a mount of checkpoint `checkpoint` of `disk_id` (a
// read-only view: a checkpoint taken from it would be of the live disk): EROFS, saying why and
// where checkpoints are taken. The CLI and the daemon both answer with it.
Status CheckpointFromAViewRefused(std::string_view mountpoint, std::string_view disk_id,
                                  std::string_view checkpoint);

std::string EncodeControlRequest(const ControlRequest& r);  // one line, '\n' included
// InvalidArgument for anything but a known op of version 1 with its fields.
Result<ControlRequest> DecodeControlRequest(std::string_view line);
std::string EncodeControlReply(const ControlReply& r);  // one line, '\n' included
// Corruption if `line` is not a reply.
Result<ControlReply> DecodeControlReply(std::string_view line);

}  // namespace archil
