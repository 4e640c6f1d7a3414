#include "engine/records/default_records.h"

#include "engine/records/field_codec.h"

namespace archil::engine {

namespace {

constexpr std::string_view kDefaultCf = "default";

// formats.md §3.1, one line per field.
// clang-format off
constexpr auto kSchemaLayout = Layout<SchemaRecord>(
    Fmt(),
    Reserved(3),
    Field(&SchemaRecord::schema),
    Field(&SchemaRecord::min_reader),
    Field(&SchemaRecord::created));
static_assert(kSchemaLayout.size() == 20);

constexpr auto kServerLayout = Layout<ServerRecord>(
    Fmt(),
    Reserved(3),
    Field(&ServerRecord::server_id),
    Field(&ServerRecord::created));
static_assert(kServerLayout.size() == 28);

constexpr auto kOwnerLayout = Layout<OwnerRecord>(
    Fmt(),
    Reserved(3),
    Field(&OwnerRecord::owner_gen));
static_assert(kOwnerLayout.size() == 8);

constexpr auto kBootLayout = Layout<BootRecord>(
    Fmt(),
    Reserved(7),
    Field(&BootRecord::boot_count));
static_assert(kBootLayout.size() == 16);
// clang-format on

}  // namespace

std::string EncodeSchema(const SchemaRecord& r) { return kSchemaLayout.Encode(r); }

Result<SchemaRecord> DecodeSchema(std::string_view v) {
  return kSchemaLayout.DecodeExact(kDefaultCf, "SCHEMA", v);
}

std::string EncodeServer(const ServerRecord& r) { return kServerLayout.Encode(r); }

Result<ServerRecord> DecodeServer(std::string_view v) {
  return kServerLayout.DecodeExact(kDefaultCf, "SERVER", v);
}

std::string EncodeOwner(const OwnerRecord& r) { return kOwnerLayout.Encode(r); }

Result<OwnerRecord> DecodeOwner(std::string_view v) {
  ARCHIL_ASSIGN_OR_RETURN(OwnerRecord r, kOwnerLayout.DecodeExact(kDefaultCf, "OWNER", v));
  if (r.owner_gen == 0) return Status::Corruption("default: OWNER with generation 0");
  return r;
}

std::string EncodeBoot(const BootRecord& r) { return kBootLayout.Encode(r); }

Result<BootRecord> DecodeBoot(std::string_view v) {
  return kBootLayout.DecodeExact(kDefaultCf, "BOOT", v);
}

}  // namespace archil::engine
