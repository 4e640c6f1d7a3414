#include "tier/write_gate.h"

#include <cerrno>

namespace archil::tier {

Status AdmitWrite(const WriteGateState& s, const WriteGateOptions& o) {
  if (s.fenced) {
    // EROFS: to the applications on its mounts the disk has become read-only, as a local file
    // system does when it can no longer write (ext4's errors=remount-ro).
    return Status::Errno(
        EROFS, "this server was fenced: its bucket now belongs to " + s.fenced_by + "; stop it");
  }
  if (!s.stopped.empty()) {
    return Status::Errno(
        EIO, "writes refused: this disk's data can no longer reach the bucket (" + s.stopped + ")");
  }
  if (!s.lease_valid) {
    return Status::Unavailable(
        "writes wait: this server has not renewed its lease on its bucket "
        "for " +
        std::to_string(s.lease_age_ms / 1000) + " s (is the object store reachable?)");
  }
  if (s.backlog.bytes > o.max_backlog_bytes) {
    return Status::Unavailable("writes wait: " + std::to_string(s.backlog.bytes >> 20) +
                               " MiB of this disk wait for the bucket (at most " +
                               std::to_string(o.max_backlog_bytes >> 20) + " MiB)");
  }
  return Status::Ok();
}

}  // namespace archil::tier
