// CatalogAuthority: the disk server's token check against the control plane's catalog
// (dataplane/engine_disks.h says how the catalog and the engine share the truth).
//
// Thread-safety: safe for concurrent use.
#pragma once

#include "catalog/catalog.h"
#include "engine/engine.h"
#include "server/authority.h"

namespace archil {

// Disk tokens as the catalog has them (protocol.md §11): the secret is compared in constant
// time, an unknown id against a dummy hash; a disk the token does not open is NotFound.
class CatalogAuthority final : public server::Authority {
 public:
  CatalogAuthority(Catalog* catalog, engine::Engine* engine) : catalog_(catalog), engine_(engine) {}
  Result<server::Grant> Authorize(std::string_view token, std::string_view disk) override;

 private:
  Result<server::Grant> AuthorizeRoot(const DiskUser& user, std::string_view disk);
  std::string BranchName(engine::DiskNo disk);

  Catalog* const catalog_;
  engine::Engine* const engine_;
};

}  // namespace archil
