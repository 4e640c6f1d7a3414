// DirectoryDiskData: the DiskDataStore of a server without a storage engine: each disk's data is
// the directory <root>/<disk id>, removed recursively on purge.
//
// Thread-safety: stateless; safe for concurrent use.
#pragma once

#include <string>

#include "catalog/disk_data.h"

namespace archil {

class DirectoryDiskData final : public DiskDataStore {
 public:
  explicit DirectoryDiskData(std::string root) : root_(std::move(root)) {}
  Status PurgeDiskData(const DiskId& disk) override;

 private:
  const std::string root_;
};

}  // namespace archil
