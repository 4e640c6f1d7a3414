#include "engine/records/default_records.h"

#include "engine/records/record_util.h"

namespace archil::engine {

namespace {
constexpr std::string_view kDefaultCf = "default";
}

std::string EncodeSchema(const SchemaRecord& r) {
  std::string v(1, static_cast<char>(kValueFmt));
  PutZeros(&v, 3);
  PutFixed32LE(&v, r.schema);
  PutFixed32LE(&v, r.min_reader);
  PutI64(&v, r.created);
  return v;
}

Result<SchemaRecord> DecodeSchema(std::string_view v) {
  ARCHIL_RETURN_IF_ERROR(CheckFixed(kDefaultCf, "SCHEMA", v, 20));
  return SchemaRecord{U32(v, 4), U32(v, 8), I64(v, 12)};
}

std::string EncodeServer(const ServerRecord& r) {
  std::string v(1, static_cast<char>(kValueFmt));
  PutZeros(&v, 3);
  PutBytes16(&v, r.server_id);
  PutI64(&v, r.created);
  return v;
}

Result<ServerRecord> DecodeServer(std::string_view v) {
  ARCHIL_RETURN_IF_ERROR(CheckFixed(kDefaultCf, "SERVER", v, 28));
  return ServerRecord{GetBytes16(v.data() + 4), I64(v, 20)};
}

std::string EncodeOwner(const OwnerRecord& r) {
  std::string v(1, static_cast<char>(kValueFmt));
  PutZeros(&v, 3);
  PutFixed32LE(&v, r.owner_gen);
  return v;
}

Result<OwnerRecord> DecodeOwner(std::string_view v) {
  ARCHIL_RETURN_IF_ERROR(CheckFixed(kDefaultCf, "OWNER", v, 8));
  OwnerRecord r{U32(v, 4)};
  if (r.owner_gen == 0) return Status::Corruption("default: OWNER with generation 0");
  return r;
}

std::string EncodeBoot(const BootRecord& r) {
  std::string v(1, static_cast<char>(kValueFmt));
  PutZeros(&v, 7);
  PutFixed64LE(&v, r.boot_count);
  return v;
}

Result<BootRecord> DecodeBoot(std::string_view v) {
  ARCHIL_RETURN_IF_ERROR(CheckFixed(kDefaultCf, "BOOT", v, 16));
  return BootRecord{U64(v, 8)};
}

}  // namespace archil::engine
