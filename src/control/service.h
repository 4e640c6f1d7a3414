// ControlService: the control plane's operations, independent of HTTP and JSON.
//
// It validates input, issues credentials (keeping only their hashes) and calls the Catalog.
// The HTTP layer (api_router.h) parses requests into these calls and renders the results.
//
// Thread-safety: safe for concurrent use (the Catalog serialises what must be serialised).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "base/clock.h"
#include "base/status.h"
#include "catalog/catalog.h"
#include "catalog/events.h"

namespace archil {

struct CreateDiskRequest {
  std::string name;
  RootAttrs root;  // defaults when the request has no rootAttrs
};

struct CreatedDisk {
  Disk disk;
  bool created = false;  // false: an identical disk existed (idempotent create)
  std::string token;     // the first user's disk token; empty unless created
};

struct CreatedUser {
  DiskUser user;
  std::string token;  // shown once
};

struct CreatedApiKey {
  ApiKey key;
  std::string token;  // shown once
};

class ControlService {
 public:
  // `events` (may be null) hears of deleted disks and removed disk tokens once they are durable.
  ControlService(Catalog* catalog, const Clock* clock, std::string region,
                 CatalogListener* events = nullptr);

  // The API key named by an Authorization header value. Unauthenticated when missing, malformed,
  // unknown or revoked; PermissionDenied when it is a valid disk token (which can only mount).
  Result<ApiKey> Authenticate(std::string_view authorization) const;

  Result<CreatedDisk> CreateDisk(const CreateDiskRequest& request);
  Result<Disk> GetDisk(std::string_view id) const;
  Result<Page<Disk>> ListDisks(const PageRequest& page, std::string_view name) const;
  Status DeleteDisk(std::string_view id);

  Result<CreatedUser> AddDiskUser(std::string_view disk_id, std::string_view nickname);
  Status RemoveDiskUser(std::string_view disk_id, std::string_view identifier);

  Result<CreatedApiKey> CreateApiKey(std::string_view name, std::string_view description);
  Result<Page<ApiKey>> ListApiKeys(const PageRequest& page) const;
  Status DeleteApiKey(std::string_view id);

  // First start: if the catalog has no API key, issues one named "admin", hands its token to
  // `persist` (which writes DATA_DIR/admin-api-key durably) and only then stores its hash, so a
  // crash in between leaves no key nobody knows. Returns whether a key was issued.
  Result<bool> BootstrapAdminKey(const std::function<Status(const std::string& token)>& persist);

  const std::string& region() const { return region_; }

 private:
  Catalog* const catalog_;
  const Clock* const clock_;
  const std::string region_;
  CatalogListener* const events_;
};

// Validates a limit given by a client: 1..100; absent means 50.
Result<uint32_t> ValidatePageLimit(std::optional<uint64_t> limit);

}  // namespace archil
