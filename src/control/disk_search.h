// DiskSearch: searching a disk's files for the control plane's grep route (docs/api.md "Grep").
//
// The data plane implements it over the engine (dataplane/engine_search.h): the search reads one
// moment of the disk (a snapshot of its head, or a checkpoint), in parallel, with an RE2 pattern
// (linear in the text searched: no backtracking). The control plane checks the caller and the
// body; this interface gets a well-formed query.
//
// Thread-safety: implementations are safe for concurrent use.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/ids.h"
#include "base/status.h"

namespace archil {

struct GrepQuery {
  std::string directory = "/";  // from the disk's root
  std::string pattern;
  bool recursive = false;
  std::string checkpoint;  // empty: the head as it is when the search starts
  int64_t max_duration_ms = 30'000;
  int concurrency = 4;
  uint64_t max_results = 1000;
};

struct GrepHit {
  std::string file;   // from the disk's root, starting with "/"
  uint64_t line = 0;  // 1-based
  std::string text;   // the line, without its newline, cut to 1,024 bytes
};

struct GrepAnswer {
  std::vector<GrepHit> matches;
  std::string stopped_reason;  // completed, incomplete, max_results, deadline, list_failed
  uint64_t files_scanned = 0;
  int64_t duration_ms = 0;
};

class DiskSearch {
 public:
  virtual ~DiskSearch() = default;
  // InvalidArgument for a pattern that does not compile, limits out of range or a directory that
  // is not one (its message says which); NotFound for an unknown disk, checkpoint or directory;
  // Unavailable while the server runs as many searches as it allows.
  virtual Result<GrepAnswer> Grep(const DiskId& disk, const GrepQuery& query) = 0;
};

}  // namespace archil
