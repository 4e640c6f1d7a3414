#include "engine/records/log_record.h"

#include "engine/records/keys.h"
#include "engine/records/record_util.h"

namespace archil::engine {
namespace {

constexpr size_t kHeader = 32;

Status Bad(const std::string& what) { return Status::Corruption("log record: " + what); }

}  // namespace

bool LoggedCf(Cf cf) { return cf >= Cf::kMeta && cf <= Cf::kSegUsage; }

bool LoggedKey(Cf cf, std::string_view key) {
  if (!LoggedCf(cf)) return false;
  // meta keys are disk(8) | rtype(1) | ...: LOCAL is the server's own state.
  return !(cf == Cf::kMeta && key.size() >= 9 &&
           static_cast<uint8_t>(key[8]) == static_cast<uint8_t>(MetaType::kLocal));
}

// Hand-written, not a field_codec.h layout: the flags byte is derived (kLogFlagDepends), and three
// counted lists follow the header, one of them optional, each mutation with checks of its own.
std::string EncodeLogRecord(const LogRecord& r) {
  std::string v;
  size_t size = kHeader + 16 * r.segrefs.size();
  for (const LogMutation& m : r.mutations) size += 8 + m.key.size() + m.value.size();
  v.reserve(size);
  v.push_back(static_cast<char>(kValueFmt));
  v.push_back(static_cast<char>(r.depends_on.empty() ? r.flags : r.flags | kLogFlagDepends));
  PutFixed16LE(&v, static_cast<uint16_t>(r.segrefs.size()));
  PutFixed32LE(&v, static_cast<uint32_t>(r.mutations.size()));
  PutFixed64LE(&v, r.seq.value());
  PutFixed64LE(&v, r.epoch.value());
  PutI64(&v, r.commit_ns);
  for (const auto& [disk, seg] : r.segrefs) {
    PutFixed64LE(&v, disk.value());
    PutFixed64LE(&v, seg.value());
  }
  if (!r.depends_on.empty()) {
    PutFixed16LE(&v, static_cast<uint16_t>(r.depends_on.size()));
    for (const auto& [disk, seq] : r.depends_on) {
      PutFixed64LE(&v, disk.value());
      PutFixed64LE(&v, seq.value());
    }
  }
  for (const LogMutation& m : r.mutations) {
    v.push_back(static_cast<char>(m.op));
    v.push_back(static_cast<char>(m.cf));
    PutFixed16LE(&v, static_cast<uint16_t>(m.key.size()));
    PutFixed32LE(&v, static_cast<uint32_t>(m.value.size()));
    v.append(m.key);
    v.append(m.value);
  }
  return v;
}

Result<LogRecord> DecodeLogRecord(std::string_view v, DiskNo disk) {
  if (v.size() < kHeader) return Bad(std::to_string(v.size()) + " bytes, want at least 32");
  if (U8(v, 0) != kValueFmt) return FmtUnsupported("outbox", U8(v, 0));
  LogRecord r;
  r.flags = U8(v, 1);
  if (r.flags & ~(kLogFlagEpochBump | kLogFlagDepends)) {
    return Bad("unknown flags " + std::to_string(r.flags));
  }
  const size_t n_segrefs = U16(v, 2);
  const size_t n_mutations = U32(v, 4);
  r.seq = Seq(U64(v, 8));
  r.epoch = Epoch(U64(v, 16));
  r.commit_ns = I64(v, 24);
  if (r.seq.value() == 0) return Bad("seq 0");
  size_t off = kHeader;
  if ((v.size() - off) / 16 < n_segrefs) return Bad("segment refs run past the end");
  r.segrefs.reserve(n_segrefs);
  for (size_t i = 0; i < n_segrefs; ++i, off += 16) {
    r.segrefs.emplace_back(DiskNo(U64(v, off)), SegNo(U64(v, off + 8)));
  }
  if (r.flags & kLogFlagDepends) {
    r.flags &= ~kLogFlagDepends;
    if (v.size() - off < 2) return Bad("dependencies truncated");
    const size_t n = U16(v, off);
    off += 2;
    if (n == 0) return Bad("the dependency flag without dependencies");
    if ((v.size() - off) / 16 < n) return Bad("dependencies run past the end");
    for (size_t i = 0; i < n; ++i, off += 16) {
      r.depends_on.emplace_back(DiskNo(U64(v, off)), Seq(U64(v, off + 8)));
    }
  }
  // Each mutation takes at least 8 bytes, so a count the bytes cannot hold is refused before
  // anything is reserved for it.
  if ((v.size() - off) / 8 < n_mutations) return Bad("mutation count past the end");
  r.mutations.reserve(n_mutations);
  for (size_t i = 0; i < n_mutations; ++i) {
    if (v.size() - off < 8) return Bad("mutation " + std::to_string(i) + " truncated");
    LogMutation m;
    const uint8_t op = U8(v, off);
    const uint8_t cf = U8(v, off + 1);
    const size_t key_len = U16(v, off + 2);
    const size_t val_len = U32(v, off + 4);
    off += 8;
    if (op < 1 || op > 3) return Bad("mutation " + std::to_string(i) + ": unknown op");
    m.op = static_cast<LogOp>(op);
    if (cf >= kNumCfs || !LoggedCf(static_cast<Cf>(cf))) {
      return Bad("mutation " + std::to_string(i) + ": cf tag " + std::to_string(cf) +
                 " is not logged");
    }
    m.cf = static_cast<Cf>(cf);
    if (v.size() - off < key_len || v.size() - off - key_len < val_len) {
      return Bad("mutation " + std::to_string(i) + " runs past the end");
    }
    m.key = std::string(v.substr(off, key_len));
    m.value = std::string(v.substr(off + key_len, val_len));
    off += key_len + val_len;
    if (m.key.size() < 8 || DecodeFixed64BE(m.key.data()) != disk.value()) {
      return Bad("mutation " + std::to_string(i) + " is not a key of disk " +
                 std::to_string(disk.value()));
    }
    if (!LoggedKey(m.cf, m.key)) return Bad("mutation " + std::to_string(i) + " of LOCAL");
    if (m.op == LogOp::kDelete && !m.value.empty()) {
      return Bad("mutation " + std::to_string(i) + ": a delete with a value");
    }
    r.mutations.push_back(std::move(m));
  }
  if (off != v.size()) return Bad(std::to_string(v.size() - off) + " bytes after the mutations");
  return r;
}

}  // namespace archil::engine
