#include "tier/log_object.h"

#include <cinttypes>
#include <cstdio>

#include "base/coding.h"
#include "base/crc32c.h"
#include "base/strings.h"
#include "engine/records/log_record.h"
#include "tier/object_frame.h"

namespace archil::tier {
namespace {

constexpr std::string_view kLogMagic("ARCHLOG\0", 8);
constexpr std::string_view kLogEndMagic("ARCHLEND", 8);
constexpr size_t kLogHeader = 48;

Status BadLog(const std::string& what) { return Status::Corruption("log object: " + what); }

}  // namespace

std::string EncodeLogObject(const LogObject& o) {
  std::string v;
  v.append(kLogMagic);
  PutFixed16LE(&v, 1);
  PutFixed16LE(&v, 0);
  PutFixed32LE(&v, o.owner_gen);
  PutFixed64LE(&v, o.disk.value());
  PutFixed64LE(&v, o.first_seq.value());
  PutFixed64LE(&v, o.last_seq().value());
  PutFixed32LE(&v, static_cast<uint32_t>(o.records.size()));
  PutFixed32LE(&v, 0);  // the header CRC, set by FinishFrame
  for (const std::string& r : o.records) {
    PutFixed32LE(&v, static_cast<uint32_t>(r.size()));
    PutFixed32LE(&v, Crc32c(r));
    v.append(r);
  }
  FinishFrame(&v, kLogHeader, kLogEndMagic);
  return v;
}

Result<LogObject> DecodeLogObject(std::string_view v) {
  ARCHIL_RETURN_IF_ERROR(CheckFrame(v, kLogMagic, kLogEndMagic, kLogHeader, "log object"));
  const size_t end = v.size() - kFrameTrailer;
  LogObject o;
  o.owner_gen = DecodeFixed32LE(v.data() + 12);
  o.disk = engine::DiskNo(DecodeFixed64LE(v.data() + 16));
  o.first_seq = engine::Seq(DecodeFixed64LE(v.data() + 24));
  const uint64_t last = DecodeFixed64LE(v.data() + 32);
  const uint32_t n = DecodeFixed32LE(v.data() + 40);
  if (n == 0 || o.first_seq.value() == 0 || last < o.first_seq.value() ||
      last - o.first_seq.value() + 1 != n) {
    return BadLog("seqs " + std::to_string(o.first_seq.value()) + ".." + std::to_string(last) +
                  " do not hold " + std::to_string(n) + " records");
  }
  size_t off = kLogHeader;
  for (uint32_t i = 0; i < n; ++i) {
    if (end - off < 8) return BadLog("record " + std::to_string(i) + " truncated");
    const size_t len = DecodeFixed32LE(v.data() + off);
    const uint32_t crc = DecodeFixed32LE(v.data() + off + 4);
    off += 8;
    if (end - off < len) return BadLog("record " + std::to_string(i) + " runs past the end");
    std::string_view rec = v.substr(off, len);
    if (Crc32c(rec) != crc) return BadLog("record " + std::to_string(i) + " CRC mismatch");
    ARCHIL_ASSIGN_OR_RETURN(engine::LogRecord r, engine::DecodeLogRecord(rec, o.disk));
    if (r.seq.value() != o.first_seq.value() + i) {
      return BadLog("record " + std::to_string(i) + " has seq " + std::to_string(r.seq.value()));
    }
    o.records.emplace_back(rec);
    off += len;
  }
  if (off != end) return BadLog(std::to_string(end - off) + " bytes after the records");
  return o;
}

std::string LogObjectKey(engine::DiskNo disk, uint32_t owner_gen, engine::Seq first_seq) {
  char tail[8 + 1 + 16 + 1];
  std::snprintf(tail, sizeof tail, "%08" PRIx32 "/%016" PRIx64, owner_gen, first_seq.value());
  return LogObjectPrefix(disk) + tail;
}

std::string LogObjectPrefix(engine::DiskNo disk) {
  return "disks/" + engine::DiskIdFromNo(disk).str() + "/log/";
}

Result<LogObjectName> ParseLogObjectKey(std::string_view key) {
  // disks/<dsk-id>/log/<gen:08x>/<first:016x>
  const Status bad = Status::InvalidArgument("not a log object's key: " + std::string(key));
  if (!key.starts_with("disks/")) return bad;
  const size_t slash = key.find('/', 6);
  if (slash == std::string_view::npos) return bad;
  const std::string_view tail = key.substr(slash);
  if (tail.size() != 5 + 8 + 1 + 16 || !tail.starts_with("/log/") || tail[13] != '/') return bad;
  Result<engine::DiskNo> disk = engine::DiskNoFromText(key.substr(6, slash - 6));
  if (!disk.ok()) return bad;
  const std::optional<uint64_t> gen = ParseLowerHex(tail.substr(5, 8), 8);
  const std::optional<uint64_t> first = ParseLowerHex(tail.substr(14, 16), 16);
  if (!gen || !first || *first == 0) return bad;
  return LogObjectName{*disk, static_cast<uint32_t>(*gen), engine::Seq(*first)};
}

}  // namespace archil::tier
