#include "tier/snapshot_part.h"

#include <cinttypes>
#include <cstdio>

#include "base/coding.h"
#include "engine/records/keys.h"
#include "engine/records/log_record.h"
#include "tier/object_frame.h"

namespace archil::tier {
namespace {

constexpr std::string_view kPartMagic("ARCHSNP\0", 8);
constexpr std::string_view kPartEndMagic("ARCHSEND", 8);
constexpr size_t kPartHeader = 40;
constexpr size_t kEntryHeader = 7;

Status BadPart(const std::string& what) { return Status::Corruption("snapshot part: " + what); }

}  // namespace

SnapshotPartWriter::SnapshotPartWriter(engine::DiskNo disk, engine::Seq seq, uint32_t index) {
  buf_.append(kPartMagic);
  PutFixed16LE(&buf_, 1);
  PutFixed16LE(&buf_, 0);
  PutFixed32LE(&buf_, index);
  PutFixed64LE(&buf_, disk.value());
  PutFixed64LE(&buf_, seq.value());
  PutFixed32LE(&buf_, 0);  // n_entries, set by Finish
  PutFixed32LE(&buf_, 0);  // header CRC, set by Finish
}

void SnapshotPartWriter::Add(engine::Cf cf, std::string_view key, std::string_view value) {
  buf_.push_back(static_cast<char>(cf));
  PutFixed16LE(&buf_, static_cast<uint16_t>(key.size()));
  PutFixed32LE(&buf_, static_cast<uint32_t>(value.size()));
  buf_.append(key);
  buf_.append(value);
  ++n_;
}

std::string SnapshotPartWriter::Finish() {
  std::string n;
  PutFixed32LE(&n, n_);
  buf_.replace(32, 4, n);
  FinishFrame(&buf_, kPartHeader, kPartEndMagic);
  return std::move(buf_);
}

std::string EncodeSnapshotPart(const SnapshotPart& p) {
  SnapshotPartWriter w(p.disk, p.seq, p.index);
  for (const SnapshotEntry& e : p.entries) w.Add(e.cf, e.key, e.value);
  return w.Finish();
}

Result<SnapshotPart> DecodeSnapshotPart(std::string_view v) {
  ARCHIL_RETURN_IF_ERROR(CheckFrame(v, kPartMagic, kPartEndMagic, kPartHeader, "snapshot part"));
  const size_t end = v.size() - kFrameTrailer;
  SnapshotPart p;
  p.index = DecodeFixed32LE(v.data() + 12);
  p.disk = engine::DiskNo(DecodeFixed64LE(v.data() + 16));
  p.seq = engine::Seq(DecodeFixed64LE(v.data() + 24));
  const uint32_t n = DecodeFixed32LE(v.data() + 32);
  const std::string prefix = engine::DiskPrefix(p.disk);
  size_t off = kPartHeader;
  for (uint32_t i = 0; i < n; ++i) {
    const std::string at = "entry " + std::to_string(i);
    if (end - off < kEntryHeader) return BadPart(at + " truncated");
    const uint8_t tag = static_cast<uint8_t>(v[off]);
    const size_t klen = DecodeFixed16LE(v.data() + off + 1);
    const size_t vlen = DecodeFixed32LE(v.data() + off + 3);
    off += kEntryHeader;
    if (end - off < klen || end - off - klen < vlen) return BadPart(at + " runs past the end");
    if (tag >= engine::kNumCfs)
      return BadPart(at + ": unknown column family " + std::to_string(tag));
    SnapshotEntry e;
    e.cf = static_cast<engine::Cf>(tag);
    e.key.assign(v.substr(off, klen));
    e.value.assign(v.substr(off + klen, vlen));
    off += klen + vlen;
    if (!engine::LoggedKey(e.cf, e.key)) return BadPart(at + ": a key that is not logged");
    if (!e.key.starts_with(prefix)) return BadPart(at + ": a key of another disk");
    if (!p.entries.empty()) {
      const SnapshotEntry& prev = p.entries.back();
      if (prev.cf > e.cf || (prev.cf == e.cf && prev.key >= e.key)) {
        return BadPart(at + " out of order");
      }
    }
    p.entries.push_back(std::move(e));
  }
  if (off != end) return BadPart(std::to_string(end - off) + " bytes after the entries");
  return p;
}

std::string SnapshotName(uint32_t owner_gen, engine::Seq seq) {
  char name[8 + 1 + 16 + 1];
  std::snprintf(name, sizeof name, "%08" PRIx32 "-%016" PRIx64, owner_gen, seq.value());
  return name;
}

std::string SnapshotPrefix(engine::DiskNo disk, uint32_t owner_gen, engine::Seq seq) {
  return "disks/" + engine::DiskIdFromNo(disk).str() + "/snap/" + SnapshotName(owner_gen, seq) +
         "/";
}

std::string SnapshotPartKey(engine::DiskNo disk, uint32_t owner_gen, engine::Seq seq,
                            uint32_t index) {
  char part[5 + 6 + 1];
  std::snprintf(part, sizeof part, "part-%06" PRIx32, index);
  return SnapshotPrefix(disk, owner_gen, seq) + part;
}

}  // namespace archil::tier
