// Authority: the disk server's view of the control plane's credentials (docs/protocol.md §11).
// The server asks it whether a disk token opens a disk; the control plane implements it over
// its catalog (control/catalog_authority.h), tests with a table.
//
// Thread-safety: implementations are safe for concurrent use.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/ip_range.h"
#include "base/status.h"
#include "engine/types.h"

namespace archil::server {

struct Grant {
  engine::DiskNo disk;  // the disk the session opens
  std::string disk_id;  // its public id, "dsk-..."
  std::string disk_name;
  std::string token_id;  // the token's public id: only it may bind the session again
  // Client addresses that may open or bind sessions on the disk (its lineage root's list);
  // empty: any. The server checks the connection's peer against it.
  std::vector<IpRange> allowed_ips;
};

class Authority {
 public:
  virtual ~Authority() = default;
  // Checks disk token `token` and resolves `disk` (a disk id, a disk name, or "" for the token's
  // own disk). Unauthenticated for a malformed, unknown, wrong or revoked token (one answer for
  // all, and in constant time for the secret); NotFound for a disk that does not exist or that
  // the token does not open (the same answer, so it is no oracle).
  virtual Result<Grant> Authorize(std::string_view token, std::string_view disk) = 0;
};

}  // namespace archil::server
