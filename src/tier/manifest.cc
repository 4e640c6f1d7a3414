#include "tier/manifest.h"

#include <cinttypes>
#include <cstdio>

#include "api/json_body.h"
#include "base/coding.h"
#include "base/crc32c.h"
#include "base/strings.h"
#include "tier/snapshot_part.h"

namespace archil::tier {
namespace {

using nlohmann::json;

constexpr std::string_view kManifestMagic("ARCHOBJ\0", 8);
constexpr std::string_view kManifestEndMagic("AEND", 4);
constexpr size_t kManifestHeader = 24;
constexpr size_t kTrailer = 8;

Status BadManifest(const std::string& what) { return Status::Corruption(what); }

Result<json> ParseBody(std::string_view v, EnvelopeKind kind, const char* what) {
  ARCHIL_ASSIGN_OR_RETURN(std::string body, DecodeEnvelope(v, kind));
  Result<json> j = ParseJsonObject(body);
  if (!j.ok()) return BadManifest(std::string(what) + ": " + j.status().message());
  Result<std::optional<uint64_t>> format = OptionalUint(*j, "format", 1);
  if (!format.ok() || !*format || **format != 1)
    return BadManifest(std::string(what) + ": format not 1");
  return j;
}

// A required unsigned member at most `max`, or Corruption naming it.
Result<uint64_t> Uint(const json& o, const char* field, uint64_t max, const char* what) {
  Result<std::optional<uint64_t>> v = OptionalUint(o, field, max);
  if (!v.ok() || !*v) {
    return BadManifest(std::string(what) + ": \"" + field + "\" missing or not a number up to " +
                       std::to_string(max));
  }
  return **v;
}

Result<engine::DiskNo> DiskOf(const json& o, const char* what) {
  Result<std::string> id = RequiredString(o, "disk_id");
  if (!id.ok()) return BadManifest(std::string(what) + ": no disk_id");
  Result<engine::DiskNo> no = engine::DiskNoFromText(*id);
  if (!no.ok()) return BadManifest(std::string(what) + ": bad disk_id");
  return *no;
}

Status Known(const json& o, std::initializer_list<std::string_view> fields, const char* what) {
  Status s = CheckKnownFields(o, fields);
  return s.ok() ? s : BadManifest(std::string(what) + ": " + s.message());
}

Result<const json*> Array(const json& o, const char* field, const char* what) {
  auto it = o.find(field);
  if (it == o.end() || !it->is_array()) {
    return BadManifest(std::string(what) + ": \"" + field + "\" missing or not an array");
  }
  return &*it;
}

}  // namespace

std::string EncodeEnvelope(EnvelopeKind kind, std::string_view body) {
  std::string v;
  v.append(kManifestMagic);
  PutFixed16LE(&v, static_cast<uint16_t>(kind));
  PutFixed16LE(&v, 1);
  PutFixed32LE(&v, 0);
  PutFixed64LE(&v, body.size());
  v.append(body);
  PutFixed32LE(&v, Crc32c(v));
  v.append(kManifestEndMagic);
  return v;
}

Result<std::string> DecodeEnvelope(std::string_view v, EnvelopeKind kind) {
  if (v.size() < kManifestHeader + kTrailer) return BadManifest("object envelope: too short");
  if (v.substr(0, 8) != kManifestMagic) return BadManifest("object envelope: bad magic");
  if (v.substr(v.size() - 4) != kManifestEndMagic)
    return BadManifest("object envelope: bad end magic (torn?)");
  if (DecodeFixed64LE(v.data() + 16) != v.size() - kManifestHeader - kTrailer) {
    return BadManifest("object envelope: length mismatch");
  }
  if (DecodeFixed32LE(v.data() + v.size() - kTrailer) != Crc32c(v.data(), v.size() - kTrailer)) {
    return BadManifest("object envelope: CRC mismatch");
  }
  if (DecodeFixed16LE(v.data() + 8) != static_cast<uint16_t>(kind)) {
    return BadManifest("object envelope: kind " + std::to_string(DecodeFixed16LE(v.data() + 8)) +
                       ", want " + std::to_string(static_cast<uint16_t>(kind)));
  }
  if (DecodeFixed16LE(v.data() + 10) != 1) return BadManifest("object envelope: fmt unsupported");
  if (DecodeFixed32LE(v.data() + 12) != 0)
    return BadManifest("object envelope: reserved bytes set");
  return std::string(v.substr(kManifestHeader, v.size() - kManifestHeader - kTrailer));
}

std::string EncodeSnapshotManifest(const SnapshotManifest& m) {
  json parts = json::array();
  for (const SnapshotPartInfo& p : m.parts) {
    parts.push_back({{"size", p.size}, {"crc32c", p.crc32c}, {"entries", p.entries}});
  }
  json j = {{"format", 1},
            {"disk_id", engine::DiskIdFromNo(m.disk).str()},
            {"owner_gen", m.owner_gen},
            {"seq", m.seq.value()},
            {"created_ns", m.created_ns},
            {"parts", parts},
            {"segments", m.segments}};
  return EncodeEnvelope(EnvelopeKind::kSnapshotManifest, DumpJson(j));
}

Result<SnapshotManifest> DecodeSnapshotManifest(std::string_view v) {
  constexpr const char* kWhat = "snapshot manifest";
  ARCHIL_ASSIGN_OR_RETURN(json j, ParseBody(v, EnvelopeKind::kSnapshotManifest, kWhat));
  ARCHIL_RETURN_IF_ERROR(Known(
      j, {"format", "disk_id", "owner_gen", "seq", "created_ns", "parts", "segments"}, kWhat));
  SnapshotManifest m;
  ARCHIL_ASSIGN_OR_RETURN(m.disk, DiskOf(j, kWhat));
  ARCHIL_ASSIGN_OR_RETURN(uint64_t gen, Uint(j, "owner_gen", UINT32_MAX, kWhat));
  m.owner_gen = static_cast<uint32_t>(gen);
  ARCHIL_ASSIGN_OR_RETURN(uint64_t seq, Uint(j, "seq", UINT64_MAX, kWhat));
  m.seq = engine::Seq(seq);
  auto created = j.find("created_ns");
  if (created == j.end() || !created->is_number_integer())
    return BadManifest("snapshot manifest: created_ns");
  m.created_ns = created->get<int64_t>();
  ARCHIL_ASSIGN_OR_RETURN(const json* parts, Array(j, "parts", kWhat));
  for (const json& p : *parts) {
    if (!p.is_object()) return BadManifest("snapshot manifest: a part that is not an object");
    SnapshotPartInfo info;
    ARCHIL_ASSIGN_OR_RETURN(info.size, Uint(p, "size", UINT64_MAX, kWhat));
    ARCHIL_ASSIGN_OR_RETURN(uint64_t crc, Uint(p, "crc32c", UINT32_MAX, kWhat));
    ARCHIL_ASSIGN_OR_RETURN(uint64_t n, Uint(p, "entries", UINT32_MAX, kWhat));
    info.crc32c = static_cast<uint32_t>(crc);
    info.entries = static_cast<uint32_t>(n);
    m.parts.push_back(info);
  }
  if (m.parts.empty()) return BadManifest("snapshot manifest: no parts");
  ARCHIL_ASSIGN_OR_RETURN(const json* segments, Array(j, "segments", kWhat));
  for (const json& s : *segments) {
    if (!s.is_number_unsigned())
      return BadManifest("snapshot manifest: a segment that is not a number");
    const uint64_t seg = s.get<uint64_t>();
    if (!m.segments.empty() && seg <= m.segments.back()) {
      return BadManifest("snapshot manifest: segments out of order");
    }
    m.segments.push_back(seg);
  }
  return m;
}

std::string SnapshotManifestKey(engine::DiskNo disk, uint32_t owner_gen, engine::Seq seq) {
  return SnapshotPrefix(disk, owner_gen, seq) + "SNAPSHOT";
}

std::string EncodeDiskManifest(const DiskManifest& m) {
  json snapshots = json::array();
  for (const PublishedSnapshot& s : m.snapshots) {
    snapshots.push_back({{"owner_gen", s.owner_gen}, {"seq", s.seq.value()}});
  }
  json j = {
      {"format", 1}, {"disk_id", engine::DiskIdFromNo(m.disk).str()}, {"snapshots", snapshots}};
  if (!m.owners.empty()) {
    json owners = json::array();
    for (const OwnerRange& r : m.owners) {
      owners.push_back(
          {{"gen", r.gen}, {"first_seq", r.first_seq.value()}, {"last_seq", r.last_seq.value()}});
    }
    j["owners"] = owners;
  }
  if (m.deleting) j["state"] = "deleting";
  return EncodeEnvelope(EnvelopeKind::kDiskManifest, DumpJson(j));
}

namespace {

Status DecodeOwners(const json& j, DiskManifest* m) {
  constexpr const char* kWhat = "disk manifest";
  if (!j.contains("owners")) return Status::Ok();
  ARCHIL_ASSIGN_OR_RETURN(const json* owners, Array(j, "owners", kWhat));
  if (owners->empty() || owners->size() > 65535)
    return BadManifest("disk manifest: bad owners list");
  for (const json& o : *owners) {
    if (!o.is_object()) return BadManifest("disk manifest: an owner that is not an object");
    ARCHIL_RETURN_IF_ERROR(Known(o, {"gen", "first_seq", "last_seq"}, kWhat));
    OwnerRange r;
    ARCHIL_ASSIGN_OR_RETURN(uint64_t gen, Uint(o, "gen", UINT32_MAX, kWhat));
    ARCHIL_ASSIGN_OR_RETURN(uint64_t first, Uint(o, "first_seq", UINT64_MAX, kWhat));
    ARCHIL_ASSIGN_OR_RETURN(uint64_t last, Uint(o, "last_seq", UINT64_MAX, kWhat));
    r.gen = static_cast<uint32_t>(gen);
    r.first_seq = engine::Seq(first);
    r.last_seq = engine::Seq(last);
    const bool open = last == 0;
    if (gen == 0 || first == 0 || (!open && last + 1 < first)) {
      return BadManifest("disk manifest: an owner range that is not one");
    }
    if (!m->owners.empty()) {
      const OwnerRange& prev = m->owners.back();
      if (prev.last_seq.value() == 0 || r.gen <= prev.gen ||
          r.first_seq.value() != prev.last_seq.value() + 1) {
        return BadManifest("disk manifest: owner ranges out of order");
      }
    }
    m->owners.push_back(r);
  }
  if (m->owners.back().last_seq.value() != 0)
    return BadManifest("disk manifest: no open owner range");
  return Status::Ok();
}

}  // namespace

std::optional<engine::Seq> UsableThrough(const DiskManifest& m, uint32_t gen, engine::Seq first,
                                         engine::Seq last) {
  if (m.owners.empty()) {
    if (gen != 1) return std::nullopt;
    return last;
  }
  for (const OwnerRange& r : m.owners) {
    if (r.gen != gen) continue;
    if (first.value() < r.first_seq.value()) return std::nullopt;
    if (r.last_seq.value() == 0) return last;
    if (first.value() > r.last_seq.value()) return std::nullopt;
    return engine::Seq(std::min(last.value(), r.last_seq.value()));
  }
  return std::nullopt;
}

uint32_t CurrentOwner(const DiskManifest& m) { return m.owners.empty() ? 1 : m.owners.back().gen; }

DiskManifest HandOver(DiskManifest m, uint32_t gen, engine::Seq from) {
  if (m.owners.empty()) m.owners.push_back(OwnerRange{1, engine::Seq(1), engine::Seq(0)});
  // What the new owner did not take (ranges from `from` on) is no longer anyone's.
  while (!m.owners.empty() && m.owners.back().first_seq.value() >= from.value()) {
    m.owners.pop_back();
  }
  if (!m.owners.empty()) m.owners.back().last_seq = engine::Seq(from.value() - 1);
  m.owners.push_back(OwnerRange{gen, from, engine::Seq(0)});
  return m;
}

Result<DiskManifest> DecodeDiskManifest(std::string_view v) {
  constexpr const char* kWhat = "disk manifest";
  ARCHIL_ASSIGN_OR_RETURN(json j, ParseBody(v, EnvelopeKind::kDiskManifest, kWhat));
  ARCHIL_RETURN_IF_ERROR(Known(j, {"format", "disk_id", "snapshots", "owners", "state"}, kWhat));
  DiskManifest m;
  ARCHIL_RETURN_IF_ERROR(DecodeOwners(j, &m));
  if (j.contains("state")) {
    Result<std::string> state = RequiredString(j, "state");
    if (!state.ok() || *state != "deleting") return BadManifest("disk manifest: unknown state");
    m.deleting = true;
  }
  ARCHIL_ASSIGN_OR_RETURN(m.disk, DiskOf(j, kWhat));
  ARCHIL_ASSIGN_OR_RETURN(const json* snapshots, Array(j, "snapshots", kWhat));
  for (const json& s : *snapshots) {
    if (!s.is_object()) return BadManifest("disk manifest: a snapshot that is not an object");
    PublishedSnapshot p;
    ARCHIL_ASSIGN_OR_RETURN(uint64_t gen, Uint(s, "owner_gen", UINT32_MAX, kWhat));
    ARCHIL_ASSIGN_OR_RETURN(uint64_t seq, Uint(s, "seq", UINT64_MAX, kWhat));
    p.owner_gen = static_cast<uint32_t>(gen);
    p.seq = engine::Seq(seq);
    if (!m.snapshots.empty() && p.seq.value() >= m.snapshots.back().seq.value()) {
      return BadManifest("disk manifest: snapshots not newest first");
    }
    m.snapshots.push_back(p);
  }
  if (m.snapshots.size() > kRetainedSnapshots)
    return BadManifest("disk manifest: too many snapshots");
  return m;
}

std::optional<PublishedSnapshot> ParseSnapshotName(std::string_view name) {
  if (name.size() != 8 + 1 + 16 || name[8] != '-') return std::nullopt;
  const std::optional<uint64_t> gen = ParseLowerHex(name.substr(0, 8), 8);
  const std::optional<uint64_t> seq = ParseLowerHex(name.substr(9), 16);
  if (!gen || !seq) return std::nullopt;
  return PublishedSnapshot{static_cast<uint32_t>(*gen), engine::Seq(*seq)};
}

std::string DiskManifestKey(engine::DiskNo disk) {
  return "disks/" + engine::DiskIdFromNo(disk).str() + "/MANIFEST";
}

}  // namespace archil::tier
