#include "engine/records/meta_records.h"

#include "base/coding.h"
#include "engine/records/record_util.h"

namespace archil::engine {
namespace {

constexpr std::string_view kMetaCf = "meta";

}  // namespace

// ---- DISK ----

std::string EncodeDisk(const DiskRecord& r) {
  std::string v;
  v.push_back(static_cast<char>(kValueFmt));
  v.push_back(static_cast<char>(r.state));
  PutFixed16LE(&v, r.flags);
  PutFixed32LE(&v, r.lineage_index);
  PutFixed64LE(&v, r.root.value());
  PutFixed64LE(&v, r.parent.value());
  PutFixed64LE(&v, r.fork_epoch.value());
  PutFixed64LE(&v, r.read_parent.value());
  PutFixed64LE(&v, r.read_parent_epoch.value());
  PutFixed16LE(&v, r.depth);
  PutZeros(&v, 2);
  PutFixed32LE(&v, r.owner_gen);
  PutFixed64LE(&v, r.cur_epoch.value());
  PutI64(&v, r.created);
  PutBytes16(&v, r.dir_hash_key);
  PutFixed32LE(&v, r.next_lineage_index);
  PutZeros(&v, 4);
  return v;
}

Result<DiskRecord> DecodeDisk(std::string_view v) {
  ARCHIL_RETURN_IF_ERROR(CheckFixed(kMetaCf, "DISK", v, kDiskRecordSize));
  DiskRecord r;
  const uint8_t state = U8(v, 1);
  if (state < 1 || state > 3) return BadEnum("DISK", "state", state);
  r.state = static_cast<DiskState>(state);
  r.flags = U16(v, 2);
  r.lineage_index = U32(v, 4);
  if (r.lineage_index > kMaxLineageIndex) return BadEnum("DISK", "lineage_index", r.lineage_index);
  r.root = DiskNo(U64(v, 8));
  r.parent = DiskNo(U64(v, 16));
  r.fork_epoch = Epoch(U64(v, 24));
  r.read_parent = DiskNo(U64(v, 32));
  r.read_parent_epoch = Epoch(U64(v, 40));
  r.depth = U16(v, 48);
  r.owner_gen = U32(v, 52);
  r.cur_epoch = Epoch(U64(v, 56));
  r.created = I64(v, 64);
  r.dir_hash_key = GetBytes16(v.data() + 72);
  r.next_lineage_index = U32(v, 88);
  return r;
}

// ---- COUNTERS ----

std::string EncodeCounters(const CountersRecord& r) {
  std::string v;
  v.push_back(static_cast<char>(kValueFmt));
  PutZeros(&v, 7);
  PutFixed64LE(&v, r.last_seq.value());
  PutFixed64LE(&v, r.next_ino);
  PutFixed32LE(&v, r.next_seg);
  PutZeros(&v, 4);
  PutFixed64LE(&v, r.head_blocks);
  return v;
}

Result<CountersRecord> DecodeCounters(std::string_view v) {
  ARCHIL_RETURN_IF_ERROR(CheckFixed(kMetaCf, "COUNTERS", v, kCountersRecordSize));
  CountersRecord r;
  r.last_seq = Seq(U64(v, 8));
  r.next_ino = U64(v, 16);
  r.next_seg = U32(v, 24);
  r.head_blocks = U64(v, 32);
  return r;
}

// ---- EPOCH ----

std::string EncodeEpoch(const EpochRecord& r) {
  std::string v;
  v.push_back(static_cast<char>(kValueFmt));
  v.push_back(static_cast<char>(r.state));
  PutFixed16LE(&v, r.flags);
  PutFixed32LE(&v, r.branch_pins);
  PutI64(&v, r.frozen_at);
  PutString16(&v, r.checkpoint_name);
  return v;
}

Result<EpochRecord> DecodeEpoch(std::string_view v) {
  ARCHIL_RETURN_IF_ERROR(CheckFmt(kMetaCf, "EPOCH", v));
  if (v.size() < 18) return BadLength("EPOCH", v.size(), "18 + name");
  EpochRecord r;
  const uint8_t state = U8(v, 1);
  if (state < 1 || state > 2) return BadEnum("EPOCH", "state", state);
  r.state = static_cast<EpochState>(state);
  r.flags = U16(v, 2);
  r.branch_pins = U32(v, 4);
  r.frozen_at = I64(v, 8);
  ARCHIL_RETURN_IF_ERROR(TailString("EPOCH", v, 16, &r.checkpoint_name));
  return r;
}

// ---- CKPT ----

std::string EncodeCkpt(const CkptRecord& r) {
  std::string v;
  v.push_back(static_cast<char>(kValueFmt));
  v.push_back(static_cast<char>(r.state));
  PutZeros(&v, 6);
  PutFixed64LE(&v, r.epoch.value());
  PutI64(&v, r.created);
  PutI64(&v, r.committed);
  PutBytes16(&v, r.request_id);
  return v;
}

Result<CkptRecord> DecodeCkpt(std::string_view v) {
  ARCHIL_RETURN_IF_ERROR(CheckFixed(kMetaCf, "CKPT", v, kCkptRecordSize));
  CkptRecord r;
  const uint8_t state = U8(v, 1);
  if (state < 1 || state > 2) return BadEnum("CKPT", "state", state);
  r.state = static_cast<CkptState>(state);
  r.epoch = Epoch(U64(v, 8));
  r.created = I64(v, 16);
  r.committed = I64(v, 24);
  r.request_id = GetBytes16(v.data() + 32);
  return r;
}

// ---- BRANCH ----

std::string EncodeBranch(const BranchRecord& r) {
  std::string v;
  v.push_back(static_cast<char>(kValueFmt));
  PutZeros(&v, 7);
  PutFixed64LE(&v, r.child.value());
  PutFixed64LE(&v, r.parent.value());
  PutFixed64LE(&v, r.fork_epoch.value());
  PutI64(&v, r.created);
  PutString16(&v, r.from_checkpoint);
  PutString16(&v, r.idempotency_key);
  return v;
}

Result<BranchRecord> DecodeBranch(std::string_view v) {
  ARCHIL_RETURN_IF_ERROR(CheckFmt(kMetaCf, "BRANCH", v));
  if (v.size() < 44) return BadLength("BRANCH", v.size(), "44 + name + key");
  BranchRecord r;
  r.child = DiskNo(U64(v, 8));
  r.parent = DiskNo(U64(v, 16));
  r.fork_epoch = Epoch(U64(v, 24));
  r.created = I64(v, 32);
  Decoder d(v.substr(40));
  std::string_view name, key;
  if (!d.GetString16(&name) || !d.GetString16(&key) || d.remaining() != 0) {
    return BadLength("BRANCH", v.size(), "40 + 2 + name + 2 + idempotency key");
  }
  r.from_checkpoint.assign(name);
  r.idempotency_key.assign(key);
  return r;
}

// ---- ORIGIN ----

std::string EncodeOrigin(const OriginRecord& r) {
  std::string v;
  v.push_back(static_cast<char>(kValueFmt));
  PutZeros(&v, 7);
  PutFixed64LE(&v, r.disk.value());
  PutFixed64LE(&v, r.epoch.value());
  return v;
}

Result<OriginRecord> DecodeOrigin(std::string_view v) {
  ARCHIL_RETURN_IF_ERROR(CheckFixed(kMetaCf, "ORIGIN", v, kOriginRecordSize));
  return OriginRecord{DiskNo(U64(v, 8)), Epoch(U64(v, 16))};
}

// ---- ORPHAN ----

std::string EncodeOrphan(const OrphanRecord& r) {
  std::string v;
  v.push_back(static_cast<char>(kValueFmt));
  PutZeros(&v, 1);
  PutFixed16LE(&v, static_cast<uint16_t>(r.holders.size()));
  PutZeros(&v, 4);
  PutFixed64LE(&v, r.orphan_epoch.value());
  PutI64(&v, r.since);
  for (const Bytes16& h : r.holders) PutBytes16(&v, h);
  return v;
}

Result<OrphanRecord> DecodeOrphan(std::string_view v) {
  ARCHIL_RETURN_IF_ERROR(CheckFmt(kMetaCf, "ORPHAN", v));
  if (v.size() < 24) return BadLength("ORPHAN", v.size(), "24 + 16 * n_holders");
  const uint16_t n = U16(v, 2);
  if (v.size() != 24 + 16 * size_t{n}) {
    return BadLength("ORPHAN", v.size(), std::to_string(24 + 16 * size_t{n}));
  }
  OrphanRecord r;
  r.orphan_epoch = Epoch(U64(v, 8));
  r.since = I64(v, 16);
  for (size_t i = 0; i < n; ++i) r.holders.push_back(GetBytes16(v.data() + 24 + 16 * i));
  return r;
}

// ---- PURGE ----

std::string EncodePurge(const PurgeRecord& r) {
  std::string v;
  v.push_back(static_cast<char>(kValueFmt));
  v.push_back(static_cast<char>(r.reason));
  PutZeros(&v, 6);
  PutFixed64LE(&v, r.death_epoch.value());
  PutFixed64LE(&v, r.cursor);
  PutI64(&v, r.queued);
  return v;
}

Result<PurgeRecord> DecodePurge(std::string_view v) {
  ARCHIL_RETURN_IF_ERROR(CheckFixed(kMetaCf, "PURGE", v, kPurgeRecordSize));
  PurgeRecord r;
  const uint8_t reason = U8(v, 1);
  if (reason < 1 || reason > 3) return BadEnum("PURGE", "reason", reason);
  r.reason = static_cast<PurgeReason>(reason);
  r.death_epoch = Epoch(U64(v, 8));
  r.cursor = U64(v, 16);
  r.queued = I64(v, 24);
  return r;
}

// ---- SEG ----

std::string EncodeSeg(const SegRecord& r) {
  std::string v;
  v.push_back(static_cast<char>(kValueFmt));
  v.push_back(static_cast<char>(r.state));
  PutFixed16LE(&v, r.flags);
  PutFixed32LE(&v, r.data_end_blk);
  PutFixed64LE(&v, r.file_len);
  PutFixed64LE(&v, r.footer_off);
  PutFixed32LE(&v, r.footer_len);
  PutFixed32LE(&v, r.footer_crc);
  PutI64(&v, r.created);
  PutI64(&v, r.sealed);
  PutI64(&v, r.uploaded);
  PutI64(&v, r.dead);
  PutFixed64LE(&v, r.root.value());
  return v;
}

Result<SegRecord> DecodeSeg(std::string_view v) {
  ARCHIL_RETURN_IF_ERROR(CheckFixed(kMetaCf, "SEG", v, kSegRecordSize));
  SegRecord r;
  const uint8_t state = U8(v, 1);
  if (state < 1 || state > 5) return BadEnum("SEG", "state", state);
  r.state = static_cast<SegState>(state);
  r.flags = U16(v, 2);
  r.data_end_blk = U32(v, 4);
  r.file_len = U64(v, 8);
  r.footer_off = U64(v, 16);
  r.footer_len = U32(v, 24);
  r.footer_crc = U32(v, 28);
  r.created = I64(v, 32);
  r.sealed = I64(v, 40);
  r.uploaded = I64(v, 48);
  r.dead = I64(v, 56);
  r.root = DiskNo(U64(v, 64));
  return r;
}

// ---- RELOC / RELOC_REV ----

std::string EncodeReloc(const RelocRecord& r) {
  std::string v;
  v.push_back(static_cast<char>(kValueFmt));
  PutZeros(&v, 3);
  PutFixed32LE(&v, r.nblk);
  PutFixed64LE(&v, r.seg.value());
  PutFixed32LE(&v, r.blk);
  PutZeros(&v, 4);
  return v;
}

Result<RelocRecord> DecodeReloc(std::string_view v) {
  ARCHIL_RETURN_IF_ERROR(CheckFixed(kMetaCf, "RELOC", v, kRelocRecordSize));
  return RelocRecord{U32(v, 4), SegNo(U64(v, 8)), U32(v, 16)};
}

// ---- LOCAL ----

std::string EncodeLocal(const LocalRecord& r) {
  std::string v;
  v.push_back(static_cast<char>(kValueFmt));
  PutZeros(&v, 1);
  PutFixed16LE(&v, r.restarts);
  PutFixed32LE(&v, r.incarnation);
  PutFixed64LE(&v, r.uploaded_seq.value());
  PutFixed64LE(&v, r.durable_seq.value());
  PutFixed64LE(&v, r.snapshot_seq.value());
  PutZeros(&v, 8);
  return v;
}

Result<LocalRecord> DecodeLocal(std::string_view v) {
  ARCHIL_RETURN_IF_ERROR(CheckFixed(kMetaCf, "LOCAL", v, kLocalRecordSize));
  LocalRecord r;
  r.restarts = U16(v, 2);
  r.incarnation = U32(v, 4);
  r.uploaded_seq = Seq(U64(v, 8));
  r.durable_seq = Seq(U64(v, 16));
  r.snapshot_seq = Seq(U64(v, 24));
  return r;
}

}  // namespace archil::engine
