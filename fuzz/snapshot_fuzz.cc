// Fuzzes the decoders of a snapshot as recovery reads it from the object store: snapshot parts
// (src/tier/snapshot_part.h), snapshot manifests and disk manifests (src/tier/manifest.h), and
// the catalog's pointer catalog/LATEST (src/tier/catalog_shipper.h). A
// bucket can hold any bytes. Each decoder returns a value or Corruption, never crashes. A part
// has one encoding, so what is accepted encodes back to the same bytes; a manifest's JSON can be
// spelt many ways, so what is accepted decodes again, from its own encoding, to the same value.
// Byte 0 of the input picks the decoder.
#include <cstdint>
#include <string>
#include <string_view>

#include "tier/catalog_shipper.h"
#include "tier/manifest.h"
#include "tier/snapshot_part.h"

namespace archil::tier {
namespace {

void Check(bool ok) {
  if (!ok) __builtin_trap();
}

template <typename T>
void CheckRefusal(const Result<T>& r) {
  Check(r.status().code() == Status::Code::kCorruption);
}

void Run(const uint8_t* data, size_t size) {
  if (size == 0) return;
  std::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 4) {
    case 0: {
      Result<SnapshotPart> p = DecodeSnapshotPart(body);
      if (p.ok()) {
        Check(EncodeSnapshotPart(*p) == body);
      } else {
        CheckRefusal(p);
      }
      break;
    }
    case 1: {
      Result<SnapshotManifest> m = DecodeSnapshotManifest(body);
      if (m.ok()) {
        Result<SnapshotManifest> again = DecodeSnapshotManifest(EncodeSnapshotManifest(*m));
        Check(again.ok() && *again == *m);
      } else {
        CheckRefusal(m);
      }
      break;
    }
    case 3: {
      Result<CatalogPointer> p = DecodeCatalogPointer(body);
      if (p.ok()) {
        Result<CatalogPointer> again = DecodeCatalogPointer(EncodeCatalogPointer(*p));
        Check(again.ok() && *again == *p);
      } else {
        CheckRefusal(p);
      }
      break;
    }
    default: {
      Result<DiskManifest> m = DecodeDiskManifest(body);
      if (m.ok()) {
        Result<DiskManifest> again = DecodeDiskManifest(EncodeDiskManifest(*m));
        Check(again.ok() && *again == *m);
      } else {
        CheckRefusal(m);
      }
      break;
    }
  }
}

}  // namespace
}  // namespace archil::tier

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  archil::tier::Run(data, size);
  return 0;
}
