// The write gate: whether a server that keeps its disks in a bucket may acknowledge a disk's next
// mutation now (docs/tiering.md §7 and §14, ADR 0020). The recovery point (what a server has
// acknowledged that is not yet in the bucket) stays bounded only if writes wait when the bucket
// falls behind, and a write that can never reach the bucket must not be acknowledged.
//
// In order:
//   - fenced (another server took the bucket over): PermissionDenied, for good;
//   - the disk's uploads or log shipping stopped (another writer stored one of its names):
//     EIO, for good (what it would acknowledge could never reach the bucket);
//   - the lease has lapsed (the store has not answered a renewal): Unavailable, the write waits;
//   - the disk's sealed segments not yet uploaded exceed max_backlog_bytes: Unavailable, the
//     write waits until the uploader brings it under (writers slow to the upload rate, never
//     fail);
//   - else OK.
// The disk server answers Unavailable with DELAY (the client sends the request again after a
// while) and any other error with its errno.
//
// Thread-safety: a pure function.
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"
#include "tier/segment_uploader.h"

namespace archil::tier {

struct WriteGateState {
  bool fenced = false;
  std::string fenced_by;
  bool lease_valid = true;
  int64_t lease_age_ms = 0;  // since the last renewal the store answered
  DiskBacklog backlog;       // the disk's sealed segments not yet uploaded
  std::string stopped;       // why the disk's uploads or shipping stopped; "" if they run
};

struct WriteGateOptions {
  // Per disk. The default is 16 segments of 64 MiB: at 100 MB/s to the store, 10 s of uploads.
  uint64_t max_backlog_bytes = uint64_t{1} << 30;
};

Status AdmitWrite(const WriteGateState& state, const WriteGateOptions& options);

}  // namespace archil::tier
