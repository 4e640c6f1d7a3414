#include "dataplane/engine_search.h"

#include <cerrno>
#include <memory>

#include "search/grep.h"

namespace archil {

Result<GrepAnswer> EngineSearch::Grep(const DiskId& disk, const GrepQuery& query) {
  if (running_.fetch_add(1) >= kMaxRunning) {
    running_.fetch_sub(1);
    return Status::Unavailable("the server runs " + std::to_string(kMaxRunning) +
                               " searches already; retry when one has finished");
  }
  Result<GrepAnswer> out = Run(disk, query);
  running_.fetch_sub(1);
  return out;
}

Result<GrepAnswer> EngineSearch::Run(const DiskId& disk, const GrepQuery& query) {
  ARCHIL_ASSIGN_OR_RETURN(engine::DiskNo no, engine::DiskNoFromId(disk));
  Result<std::shared_ptr<engine::DiskFs>> view =
      query.checkpoint.empty() ? engine_->OpenSnapshot(no)
                               : engine_->OpenCheckpoint(no, query.checkpoint);
  if (!view.ok()) {
    if (view.status().code() == Status::Code::kNotFound && !query.checkpoint.empty()) {
      return Status::NotFound("disk '" + disk.str() + "' has no checkpoint '" + query.checkpoint +
                              "'");
    }
    return view.status();
  }
  search::GrepRequest r;
  r.directory = query.directory;
  r.pattern = query.pattern;
  r.recursive = query.recursive;
  r.max_duration_ms = query.max_duration_ms;
  r.concurrency = query.concurrency;
  r.max_results = query.max_results;
  Result<search::GrepResult> found = search::Grep(view->get(), r, clock_);
  if (!found.ok()) {
    if (found.status().sys_errno() == ENOENT) {
      return Status::NotFound("disk '" + disk.str() + "' has no directory '" + query.directory +
                              "'");
    }
    if (found.status().sys_errno() == ENOTDIR) {
      return Status::InvalidArgument("'" + query.directory + "' is not a directory");
    }
    return found.status();
  }
  GrepAnswer out;
  out.matches.reserve(found->matches.size());
  for (search::GrepMatch& m : found->matches) {
    out.matches.push_back({std::move(m.file), m.line, std::move(m.text)});
  }
  out.stopped_reason = std::string(search::StopReasonName(found->stopped));
  out.files_scanned = found->files_scanned;
  out.duration_ms = found->duration_ms;
  return out;
}

}  // namespace archil
