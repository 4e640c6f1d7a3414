// The control plane's records: disks, their users (disk tokens) and API keys.
//
// Plain values shared by the catalog, the service and the HTTP layer. Timestamps are
// microseconds since the Unix epoch.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/ids.h"
#include "base/ip_range.h"

namespace archil {

// Owner and mode of a new disk's root directory.
struct RootAttrs {
  uint32_t uid = 0;
  uint32_t gid = 0;
  uint32_t mode = 0755;  // permission bits only (<= 07777)
  bool operator==(const RootAttrs&) const = default;
};

// A credential allowed to mount a disk. Only the hash of its secret is kept.
struct DiskUser {
  std::string identifier;  // credential id (16 hex digits); stable, used to remove the user
  DiskId disk_id;
  std::string type = "token";
  std::string nickname;
  std::string token_suffix;
  std::string secret_hash;
  int64_t created_at = 0;
};

inline constexpr size_t kMaxAllowedIps = 100;

enum class DiskState { kAvailable, kDeleting };

// What makes a disk a branch (the catalog has rows for lineage roots only; branches come from
// the storage engine, control/lineage_store.h).
struct DiskBranch {
  DiskId root;
  DiskId parent;
  std::string name;
  std::string from_checkpoint;
};

struct Disk {
  DiskId id;
  std::string name;
  std::string region;
  DiskState state = DiskState::kAvailable;
  RootAttrs root;
  int64_t created_at = 0;
  std::vector<DiskUser> users;  // filled by Get/List
  // Client addresses the disk server lets open sessions on the disk and its branches (a
  // lineage root's list covers the lineage); empty: any. At most kMaxAllowedIps, no duplicates.
  std::vector<IpRange> allowed_ips;
  std::optional<DiskBranch> branch;  // set for a branch (then users and settings are the root's)
};

// An account-scoped key for the control-plane API.
struct ApiKey {
  std::string id;  // 16 hex digits
  std::string name;
  std::string description;
  std::string token_suffix;
  std::string secret_hash;
  int64_t created_at = 0;
};

// Keyset pagination. `cursor` is opaque to callers: whatever the previous page returned.
struct PageRequest {
  uint32_t limit = 50;
  std::string cursor;  // empty: first page
};

template <typename T>
struct Page {
  std::vector<T> items;
  std::string next_cursor;  // empty: this is the last page
};

}  // namespace archil
