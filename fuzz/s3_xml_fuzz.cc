// Fuzzes the parsers of S3's XML replies (src/store/s3_xml.h): a store, or whatever answers in its
// place, can send any bytes. Every parser must return a value or an error, never crash; a list it
// accepts has a key in every entry, and the byte 0 of the input picks the parser.
#include <cstdint>
#include <string>
#include <string_view>

#include "store/s3_xml.h"

namespace archil::store {
namespace {

void Check(bool ok) {
  if (!ok) __builtin_trap();
}

void Run(const uint8_t* data, size_t size) {
  if (size == 0) return;
  std::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 4) {
    case 0: {
      S3Error e = ParseS3Error(body);
      Check(e.code.size() <= body.size());
      break;
    }
    case 1: {
      Result<ListResult> r = ParseListObjectsV2(body);
      if (r.ok()) {
        for (const ObjectInfo& o : r->objects) Check(!o.key.empty());
      } else {
        Check(r.status().code() == Status::Code::kCorruption);
      }
      break;
    }
    case 2: {
      Result<std::string> r = ParseInitiateMultipart(body);
      Check(!r.ok() || !r->empty());
      break;
    }
    default: {
      Result<std::string> r = ParseCompleteMultipart(body);
      (void)r;
      break;
    }
  }
}

}  // namespace
}  // namespace archil::store

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  archil::store::Run(data, size);
  return 0;
}
