#include "tier/catalog_shipper.h"

#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <filesystem>

#include "api/json_body.h"
#include "base/crc32c.h"
#include "io/atomic_file.h"
#include "io/posix_env.h"
#include "tier/manifest.h"

namespace archil::tier {
namespace {

using nlohmann::json;

constexpr std::string_view kSnapPrefix = "catalog/snap/";
constexpr std::string_view kSqliteMagic("SQLite format 3\0", 16);

Result<std::string> ReadFile(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return Status::FromErrno(errno, "open " + path);
  std::string out;
  char buf[65536];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) out.append(buf, n);
  const bool failed = std::ferror(f) != 0;
  std::fclose(f);
  if (failed) return Status::IoError("read " + path);
  return out;
}

}  // namespace

std::string EncodeCatalogPointer(const CatalogPointer& p) {
  json j = {{"format", 1},
            {"object", p.object},
            {"size", p.size},
            {"crc32c", p.crc32c},
            {"schema", p.schema}};
  return EncodeEnvelope(EnvelopeKind::kCatalogPointer, DumpJson(j));
}

Result<CatalogPointer> DecodeCatalogPointer(std::string_view v) {
  auto bad = [](const std::string& why) { return Status::Corruption("catalog/LATEST: " + why); };
  ARCHIL_ASSIGN_OR_RETURN(std::string body, DecodeEnvelope(v, EnvelopeKind::kCatalogPointer));
  Result<json> j = ParseJsonObject(body);
  if (!j.ok()) return bad(j.status().message());
  if (!CheckKnownFields(*j, {"format", "object", "size", "crc32c", "schema"}).ok()) {
    return bad("unknown fields");
  }
  Result<std::optional<uint64_t>> format = OptionalUint(*j, "format", 1);
  Result<std::optional<uint64_t>> size = OptionalUint(*j, "size", UINT64_MAX);
  Result<std::optional<uint64_t>> crc = OptionalUint(*j, "crc32c", UINT32_MAX);
  Result<std::optional<uint64_t>> schema = OptionalUint(*j, "schema", 1000);
  Result<std::string> object = RequiredString(*j, "object");
  if (!format.ok() || !*format || **format != 1) return bad("format not 1");
  if (!size.ok() || !*size || !crc.ok() || !*crc || !schema.ok() || !*schema || !object.ok()) {
    return bad("a field is missing or of the wrong type");
  }
  if (!object->starts_with(kSnapPrefix) || !store::ValidateKey(*object).ok()) {
    return bad("names an object outside catalog/snap/");
  }
  return CatalogPointer{*object, **size, static_cast<uint32_t>(**crc), static_cast<int>(**schema)};
}

CatalogShipper::CatalogShipper(const CatalogShipperOptions& options)
    : options_(options), loop_("catalog copies", options.interval_ms, [this] { return Pass(); }) {}

CatalogShipperStats CatalogShipper::stats() const {
  MutexLock lock(&mu_);
  return stats_;
}

bool CatalogShipper::Behind() const {
  const uint64_t now = options_.version();  // before mu_: it asks the catalog
  MutexLock lock(&mu_);
  return stats_.copies == 0 || stats_.copied_version != now;
}

Status CatalogShipper::Ship() {
  const uint64_t version = options_.version();
  if (shipped_ && version == shipped_version_) return Status::Ok();
  const std::string tmp = options_.tmp_dir + "/catalog-copy.sqlite";
  unlink(tmp.c_str());  // a crash's leftover
  ARCHIL_RETURN_IF_ERROR(options_.backup(tmp));
  Result<std::string> bytes = ReadFile(tmp);
  unlink(tmp.c_str());
  if (!bytes.ok()) return bytes.status();
  char name[64];  // "%013d-%08x.sqlite": 30 bytes with its NUL, more only for a clock past 2286
  std::snprintf(name, sizeof name, "%013" PRId64 "-%08" PRIx32 ".sqlite",
                options_.clock->NowMicros() / 1000, n_++);
  CatalogPointer p{std::string(kSnapPrefix) + name, bytes->size(), Crc32c(*bytes), options_.schema};
  ARCHIL_RETURN_IF_ERROR(
      options_.store->Put(p.object, *bytes, store::PutOptions{store::Condition::kIfAbsent, ""})
          .status()
          .WithContext(p.object));
  ARCHIL_RETURN_IF_ERROR(
      options_.store->Put(kCatalogLatestKey, EncodeCatalogPointer(p), store::PutOptions{})
          .status()
          .WithContext(kCatalogLatestKey));
  shipped_ = true;
  shipped_version_ = version;
  uint64_t deleted = 0;
  ARCHIL_ASSIGN_OR_RETURN(auto copies, store::ListAll(options_.store, kSnapPrefix));
  for (size_t i = 0; i + options_.keep < copies.size(); ++i) {
    if (copies[i].key == p.object) continue;
    ARCHIL_RETURN_IF_ERROR(options_.store->Delete(copies[i].key));
    ++deleted;
  }
  MutexLock lock(&mu_);
  ++stats_.copies;
  stats_.copied_version = version;
  stats_.bytes += p.size;
  stats_.deleted += deleted;
  return Status::Ok();
}

Status CatalogShipper::Pass() {
  // A fenced server's catalog is no longer the bucket's: it copies nothing.
  if (options_.allowed && !options_.allowed()) return Status::Ok();
  Status s = Ship();
  if (!s.ok()) {
    MutexLock lock(&mu_);
    ++stats_.failed_passes;
    stats_.last_error = s.ToString();
  }
  return s;
}

Result<CatalogPointer> RestoreCatalog(store::ObjectStore* store, const std::string& path) {
  if (access(path.c_str(), F_OK) == 0) return Status::AlreadyExists(path + " exists");
  Result<std::string> latest = store->Get(kCatalogLatestKey);
  if (!latest.ok()) return latest.status();
  ARCHIL_ASSIGN_OR_RETURN(CatalogPointer p, DecodeCatalogPointer(*latest));
  Result<std::string> bytes = store->Get(p.object);
  if (!bytes.ok()) {
    return bytes.status().code() == Status::Code::kNotFound
               ? Status::Corruption("catalog/LATEST names " + p.object + ", which is missing")
               : bytes.status();
  }
  if (bytes->size() != p.size || Crc32c(*bytes) != p.crc32c ||
      !std::string_view(*bytes).starts_with(kSqliteMagic)) {
    return Status::Corruption(p.object + " is not the catalog copy catalog/LATEST describes");
  }
  ARCHIL_RETURN_IF_ERROR(io::WriteFileAtomically(io::PosixEnv(), path, *bytes, 0600));
  return p;
}

}  // namespace archil::tier
