#include "control/body_stream.h"

#include <algorithm>

namespace archil {
namespace {

class FileRange final : public BodyStream {
 public:
  FileRange(std::unique_ptr<FileReader> file, uint64_t offset, uint64_t length)
      : file_(std::move(file)), next_(offset), left_(length) {}

  Result<std::string> Next(size_t max) override {
    if (left_ == 0 || max == 0) return std::string();
    const size_t want = static_cast<size_t>(std::min<uint64_t>(left_, max));
    ARCHIL_ASSIGN_OR_RETURN(std::string bytes, file_->ReadAt(next_, want));
    if (bytes.empty()) {
      return Status::IoError("the file ended " + std::to_string(left_) +
                             " bytes before its size said it would");
    }
    if (bytes.size() > want) bytes.resize(want);
    next_ += bytes.size();
    left_ -= bytes.size();
    return bytes;
  }

 private:
  std::unique_ptr<FileReader> file_;
  uint64_t next_;
  uint64_t left_;
};

}  // namespace

std::unique_ptr<BodyStream> FileRangeStream(std::unique_ptr<FileReader> file, uint64_t offset,
                                            uint64_t length) {
  return std::make_unique<FileRange>(std::move(file), offset, length);
}

}  // namespace archil
