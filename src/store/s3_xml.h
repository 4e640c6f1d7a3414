// The XML bodies of the S3 API this project uses: error replies, ListObjectsV2, and the three of
// multipart upload. Parsers never trust the body: a reply that is not what S3 documents is
// kCorruption, never a crash (fuzz/s3_xml_fuzz.cc).
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"
#include "store/object_store.h"

namespace archil::store {

struct S3Error {
  std::string code;  // "NoSuchKey", "SlowDown", ...; empty if the body held none
  std::string message;
};
// Never fails: a body that is not an S3 error gives an empty code.
S3Error ParseS3Error(std::string_view body);

struct ListResult {
  std::vector<ObjectInfo> objects;  // keys as the store gave them (with the store's prefix)
  bool truncated = false;
};
Result<ListResult> ParseListObjectsV2(std::string_view body);

Result<std::string> ParseInitiateMultipart(std::string_view body);  // the UploadId
// One uploaded part, as CompleteMultipartUpload lists it.
struct CompletedPart {
  int number = 0;
  std::string etag;    // unquoted
  std::string crc32c;  // its x-amz-checksum-crc32c, or "" if the upload has no checksums
};
// The parts in order -> CompleteMultipartUpload's body (a <ChecksumCRC32C> for each part that
// has one: S3 requires them when the upload was created with that checksum algorithm).
std::string CompleteMultipartBody(const std::vector<CompletedPart>& parts);
// CompleteMultipartUpload can answer 200 with an <Error> body: returns the object's ETag, or
// the error (kUnavailable for InternalError/SlowDown, which the caller retries).
Result<std::string> ParseCompleteMultipart(std::string_view body);

// Strips the quotes S3 puts around an ETag.
std::string UnquoteEtag(std::string_view etag);

}  // namespace archil::store
