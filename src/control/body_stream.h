// BodyStream: a response body the HTTP session sends in chunks as it is read (http_session.h),
// for bodies too large to hold in memory (a share link's file).
//
// Thread-safety: the session calls Next from one handler-pool thread at a time, never
// concurrently.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "base/status.h"
#include "control/disk_files.h"

namespace archil {

class BodyStream {
 public:
  virtual ~BodyStream() = default;
  // The next at most `max` bytes (at least one while any remain; empty at the end). An error
  // ends the response where it is: the session closes the connection, so the client sees a body
  // shorter than its Content-Length.
  virtual Result<std::string> Next(size_t max) = 0;
};

// The bytes [offset, offset + length) of `file`. A file that turns out shorter than that is an
// error (IoError), never a silently short body.
std::unique_ptr<BodyStream> FileRangeStream(std::unique_ptr<FileReader> file, uint64_t offset,
                                            uint64_t length);

}  // namespace archil
