#include "control/directory_disk_data.h"

#include <filesystem>
#include <system_error>

namespace archil {

Status DirectoryDiskData::PurgeDiskData(const DiskId& disk) {
  if (disk.empty()) return Status::InvalidArgument("purge: no disk id");
  std::error_code ec;
  std::filesystem::remove_all(std::filesystem::path(root_) / disk.str(), ec);
  if (ec) return Status::Errno(ec.value(), "remove data of " + disk.str() + ": " + ec.message());
  return Status::Ok();
}

}  // namespace archil
