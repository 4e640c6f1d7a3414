// Values of the `default` CF (formats.md §3.1): SCHEMA, SERVER, BOOT and OWNER. Not per disk, not
// versioned; each starts with fmt = 1.
//
// Thread-safety: pure functions.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace archil::engine {

inline constexpr uint32_t kCurrentSchema = 1;

struct SchemaRecord {  // 20 bytes
  uint32_t schema = kCurrentSchema;
  uint32_t min_reader = 0;
  int64_t created = 0;
  bool operator==(const SchemaRecord&) const = default;
};
std::string EncodeSchema(const SchemaRecord& r);
Result<SchemaRecord> DecodeSchema(std::string_view v);

struct ServerRecord {  // 28 bytes
  std::array<uint8_t, 16> server_id{};
  int64_t created = 0;
  bool operator==(const ServerRecord&) const = default;
};
std::string EncodeServer(const ServerRecord& r);
Result<ServerRecord> DecodeServer(std::string_view v);

// The owner generation under which this engine writes to its object store (docs/tiering.md §5):
// the generation in the names of the segments it opens and of the objects its tier stores. It
// only grows: a recovery or a takeover raises it. Absent: 1.
struct OwnerRecord {  // 8 bytes
  uint32_t owner_gen = 1;
  bool operator==(const OwnerRecord&) const = default;
};
std::string EncodeOwner(const OwnerRecord& r);
Result<OwnerRecord> DecodeOwner(std::string_view v);

struct BootRecord {  // 16 bytes
  uint64_t boot_count = 0;
  bool operator==(const BootRecord&) const = default;
};
std::string EncodeBoot(const BootRecord& r);
Result<BootRecord> DecodeBoot(std::string_view v);

}  // namespace archil::engine
