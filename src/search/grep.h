// Grep: the lines of a directory's regular files that match a regular expression, read through a
// posix::FileSystem (the engine's DiskFs on the server), in parallel, within a time budget and a
// bound on the matches.
//
// The pattern is RE2's syntax (https://github.com/google/re2/wiki/Syntax): the cost of a search
// is linear in the bytes searched whatever the pattern (no backreferences, no look-around, no
// backtracking), and a pattern whose compiled program would exceed kMaxProgramBytes is refused.
// Matching is per line, as grep's: `^` and `$` are a line's ends, a match never spans a newline,
// and a line is reported once however many matches it holds. (?i) and the other RE2 flags work.
//
// What is searched: the regular files directly in `directory`, and with `recursive` those of
// every directory below it. Symbolic links are not followed (grep -r's rule). A file that holds a
// NUL byte in its first 8 KiB is taken as binary and not searched (it still counts as scanned).
// A line longer than kMaxLineBytes is searched in pieces of that size (a match across a piece's
// end is not found). Each file is read in kReadBytes reads, each a consistent view of that range
// of the file; a file changed while it is read is seen partly before and partly after.
//
// Thread-safety: Grep is safe to call concurrently; `fs` must be safe for concurrent use.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "posix/file_system.h"

namespace archil::search {

inline constexpr size_t kMaxPatternBytes = 4096;
inline constexpr int64_t kMaxProgramBytes = 8 << 20;  // RE2's max_mem for one pattern
inline constexpr size_t kMaxLineBytes = 1 << 20;
inline constexpr size_t kReadBytes = 1 << 20;
inline constexpr size_t kMaxTextBytes = 1024;  // of a matching line, in a result
inline constexpr int kMaxConcurrency = 16;
inline constexpr size_t kMaxResults = 10000;

struct GrepRequest {
  std::string directory = "/";  // from the disk's root; "/" or "" is the root
  std::string pattern;
  bool recursive = false;
  int64_t max_duration_ms = 30'000;
  int concurrency = 4;  // files read and searched at once
  size_t max_results = 1000;
};

struct GrepMatch {
  std::string file;   // its path from the disk's root, starting with "/"
  uint64_t line = 0;  // 1-based
  std::string text;   // the line without its newline, cut to kMaxTextBytes
  bool operator==(const GrepMatch&) const = default;
};

// Why the search stopped (the names are the API's).
enum class StopReason {
  kCompleted,   // every file was searched
  kIncomplete,  // some file could not be read; the others were searched
  kMaxResults,  // max_results matches were found; files may remain
  kDeadline,    // max_duration_ms ran out; files may remain
  kListFailed,  // a directory below `directory` could not be listed; the rest was searched
};
std::string_view StopReasonName(StopReason r);

struct GrepResult {
  std::vector<GrepMatch> matches;  // by file, then line
  StopReason stopped = StopReason::kCompleted;
  uint64_t files_scanned = 0;
  int64_t duration_ms = 0;
};

// InvalidArgument for a pattern that is empty, longer than kMaxPatternBytes, does not compile
// (RE2's message) or compiles too large, and for limits out of range (max_duration_ms 1..3600000,
// concurrency 1..kMaxConcurrency, max_results 1..kMaxResults); the errno of the path's walk
// (ENOENT, ENOTDIR, EACCES is not checked: the caller authorised the disk) for `directory`.
Result<GrepResult> Grep(posix::FileSystem* fs, const GrepRequest& request, const Clock* clock);

}  // namespace archil::search
