// The --object-store URI, and opening the store it names:
//
//   dir://PATH                                      a local directory (DirStore)
//   s3://BUCKET[/PREFIX][?endpoint=URL&region=R&addressing=path|virtual&payload=signed|unsigned]
//
// For s3://, the endpoint defaults to https://s3.REGION.amazonaws.com with virtual-hosted
// addressing; with an endpoint, addressing defaults to path (what MinIO, s3rver and most
// S3-compatible stores want). The region defaults to AWS_REGION, then AWS_DEFAULT_REGION, then
// us-east-1. `payload` is S3Config::payload (default: unsigned over https, signed over http).
// Credentials come from aws_credentials.h. Any other parameter is an error.
//
// Thread-safety: pure functions; the store returned is safe for concurrent use.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "base/status.h"
#include "store/aws_credentials.h"
#include "store/object_store.h"
#include "store/s3_store.h"

namespace archil::store {

struct StoreUri {
  enum class Kind { kDir, kS3 } kind = Kind::kDir;
  std::string path;  // kDir
  S3Config s3;       // kS3: everything but credentials
};

// kInvalidArgument naming what is wrong with the URI.
Result<StoreUri> ParseStoreUri(std::string_view uri, const GetEnv& env);

// Parses, loads credentials (s3://) and opens the store (which, for s3://, probes it).
Result<std::unique_ptr<ObjectStore>> OpenObjectStore(std::string_view uri, const GetEnv& env);

}  // namespace archil::store
