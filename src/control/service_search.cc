// ControlService: grep (control/disk_search.h, docs/api.md "Grep").
#include "control/service.h"

namespace archil {

Result<GrepAnswer> ControlService::Grep(std::string_view disk_id, std::string_view branch,
                                        const GrepQuery& query) {
  ARCHIL_ASSIGN_OR_RETURN(DiskId disk, ResolveBranch(disk_id, branch));
  if (search_ == nullptr) {
    return Status::Unavailable(
        "this server has no data plane: grep is served by the server that holds the disks");
  }
  return search_->Grep(disk, query);
}

}  // namespace archil
