// EngineFiles: the control plane's share-link reads (control/disk_files.h) over the storage
// engine: each file is opened in a snapshot view of its disk's head (Engine::OpenSnapshot), which
// the reader keeps, so one download reads one moment of the file.
//
// Thread-safety: safe for concurrent use.
#pragma once

#include "control/disk_files.h"
#include "engine/engine.h"

namespace archil {

class EngineFiles final : public DiskFiles {
 public:
  // REQUIRES: `engine` outlives this and every reader it returns.
  explicit EngineFiles(engine::Engine* engine) : engine_(engine) {}

  Result<std::unique_ptr<FileReader>> OpenFile(const DiskId& disk, std::string_view path) override;

 private:
  engine::Engine* const engine_;
};

}  // namespace archil
