#include "engine/records/meta_records.h"

#include "base/coding.h"
#include "engine/records/field_codec.h"
#include "engine/records/record_util.h"

namespace archil::engine {
namespace {

constexpr std::string_view kMetaCf = "meta";

// The layouts of formats.md §4.1, one line per field.
// clang-format off
constexpr auto kDiskLayout = Layout<DiskRecord>(
    Fmt(),
    Field(&DiskRecord::state, "state", DiskState::kActive, DiskState::kDeleting),
    Field(&DiskRecord::flags),
    Field(&DiskRecord::lineage_index, "lineage_index", 0, kMaxLineageIndex),
    Field(&DiskRecord::root),
    Field(&DiskRecord::parent),
    Field(&DiskRecord::fork_epoch),
    Field(&DiskRecord::read_parent),
    Field(&DiskRecord::read_parent_epoch),
    Field(&DiskRecord::depth),
    Reserved(2),
    Field(&DiskRecord::owner_gen),
    Field(&DiskRecord::cur_epoch),
    Field(&DiskRecord::created),
    Field(&DiskRecord::dir_hash_key),
    Field(&DiskRecord::next_lineage_index),
    Reserved(4));
static_assert(kDiskLayout.size() == kDiskRecordSize);

constexpr auto kCountersLayout = Layout<CountersRecord>(
    Fmt(),
    Reserved(7),
    Field(&CountersRecord::last_seq),
    Field(&CountersRecord::next_ino),
    Field(&CountersRecord::next_seg),
    Reserved(4),
    Field(&CountersRecord::head_blocks));
static_assert(kCountersLayout.size() == kCountersRecordSize);

// Then the checkpoint name (u16 length + bytes).
constexpr auto kEpochLayout = Layout<EpochRecord>(
    Fmt(),
    Field(&EpochRecord::state, "state", EpochState::kCheckpoint, EpochState::kReleased),
    Field(&EpochRecord::flags),
    Field(&EpochRecord::branch_pins),
    Field(&EpochRecord::frozen_at));

constexpr auto kCkptLayout = Layout<CkptRecord>(
    Fmt(),
    Field(&CkptRecord::state, "state", CkptState::kPending, CkptState::kCommitted),
    Reserved(6),
    Field(&CkptRecord::epoch),
    Field(&CkptRecord::created),
    Field(&CkptRecord::committed),
    Field(&CkptRecord::request_id));
static_assert(kCkptLayout.size() == kCkptRecordSize);

// Then the from-checkpoint name and the idempotency key (each u16 length + bytes).
constexpr auto kBranchLayout = Layout<BranchRecord>(
    Fmt(),
    Reserved(7),
    Field(&BranchRecord::child),
    Field(&BranchRecord::parent),
    Field(&BranchRecord::fork_epoch),
    Field(&BranchRecord::created));

constexpr auto kOriginLayout = Layout<OriginRecord>(
    Fmt(),
    Reserved(7),
    Field(&OriginRecord::disk),
    Field(&OriginRecord::epoch));
static_assert(kOriginLayout.size() == kOriginRecordSize);

// Then n_holders session ids of 16 bytes.
constexpr auto kOrphanLayout = Layout<OrphanRecord>(
    Fmt(),
    Reserved(1),
    Count16(&OrphanRecord::holders),
    Reserved(4),
    Field(&OrphanRecord::orphan_epoch),
    Field(&OrphanRecord::since));

constexpr auto kPurgeLayout = Layout<PurgeRecord>(
    Fmt(),
    Field(&PurgeRecord::reason, "reason", PurgeReason::kUnlinked, PurgeReason::kDiskDropped),
    Reserved(6),
    Field(&PurgeRecord::death_epoch),
    Field(&PurgeRecord::cursor),
    Field(&PurgeRecord::queued));
static_assert(kPurgeLayout.size() == kPurgeRecordSize);

constexpr auto kSegLayout = Layout<SegRecord>(
    Fmt(),
    Field(&SegRecord::state, "state", SegState::kOpen, SegState::kDead),
    Field(&SegRecord::flags),
    Field(&SegRecord::data_end_blk),
    Field(&SegRecord::file_len),
    Field(&SegRecord::footer_off),
    Field(&SegRecord::footer_len),
    Field(&SegRecord::footer_crc),
    Field(&SegRecord::created),
    Field(&SegRecord::sealed),
    Field(&SegRecord::uploaded),
    Field(&SegRecord::dead),
    Field(&SegRecord::root));
static_assert(kSegLayout.size() == kSegRecordSize);

constexpr auto kRelocLayout = Layout<RelocRecord>(
    Fmt(),
    Reserved(3),
    Field(&RelocRecord::nblk),
    Field(&RelocRecord::seg),
    Field(&RelocRecord::blk),
    Reserved(4));
static_assert(kRelocLayout.size() == kRelocRecordSize);

constexpr auto kLocalLayout = Layout<LocalRecord>(
    Fmt(),
    Reserved(1),
    Field(&LocalRecord::restarts),
    Field(&LocalRecord::incarnation),
    Field(&LocalRecord::uploaded_seq),
    Field(&LocalRecord::durable_seq),
    Field(&LocalRecord::snapshot_seq),
    Reserved(8));
static_assert(kLocalLayout.size() == kLocalRecordSize);
// clang-format on

}  // namespace

// ---- DISK ----

std::string EncodeDisk(const DiskRecord& r) { return kDiskLayout.Encode(r); }

Result<DiskRecord> DecodeDisk(std::string_view v) {
  return kDiskLayout.DecodeExact(kMetaCf, "DISK", v);
}

// ---- COUNTERS ----

std::string EncodeCounters(const CountersRecord& r) { return kCountersLayout.Encode(r); }

Result<CountersRecord> DecodeCounters(std::string_view v) {
  return kCountersLayout.DecodeExact(kMetaCf, "COUNTERS", v);
}

// ---- EPOCH ----

std::string EncodeEpoch(const EpochRecord& r) {
  std::string v = kEpochLayout.Encode(r);
  PutString16(&v, r.checkpoint_name);
  return v;
}

Result<EpochRecord> DecodeEpoch(std::string_view v) {
  ARCHIL_RETURN_IF_ERROR(CheckFmt(kMetaCf, "EPOCH", v));
  if (v.size() < kEpochLayout.size() + 2) return BadLength("EPOCH", v.size(), "18 + name");
  EpochRecord r;
  ARCHIL_RETURN_IF_ERROR(kEpochLayout.Get("EPOCH", v, &r));
  ARCHIL_RETURN_IF_ERROR(TailString("EPOCH", v, kEpochLayout.size(), &r.checkpoint_name));
  return r;
}

// ---- CKPT ----

std::string EncodeCkpt(const CkptRecord& r) { return kCkptLayout.Encode(r); }

Result<CkptRecord> DecodeCkpt(std::string_view v) {
  return kCkptLayout.DecodeExact(kMetaCf, "CKPT", v);
}

// ---- BRANCH ----

std::string EncodeBranch(const BranchRecord& r) {
  std::string v = kBranchLayout.Encode(r);
  PutString16(&v, r.from_checkpoint);
  PutString16(&v, r.idempotency_key);
  return v;
}

Result<BranchRecord> DecodeBranch(std::string_view v) {
  ARCHIL_RETURN_IF_ERROR(CheckFmt(kMetaCf, "BRANCH", v));
  if (v.size() < kBranchLayout.size() + 4) return BadLength("BRANCH", v.size(), "44 + name + key");
  BranchRecord r;
  ARCHIL_RETURN_IF_ERROR(kBranchLayout.Get("BRANCH", v, &r));
  Decoder d(v.substr(kBranchLayout.size()));
  std::string_view name, key;
  if (!d.GetString16(&name) || !d.GetString16(&key) || d.remaining() != 0) {
    return BadLength("BRANCH", v.size(), "40 + 2 + name + 2 + idempotency key");
  }
  r.from_checkpoint.assign(name);
  r.idempotency_key.assign(key);
  return r;
}

// ---- ORIGIN ----

std::string EncodeOrigin(const OriginRecord& r) { return kOriginLayout.Encode(r); }

Result<OriginRecord> DecodeOrigin(std::string_view v) {
  return kOriginLayout.DecodeExact(kMetaCf, "ORIGIN", v);
}

// ---- ORPHAN ----

std::string EncodeOrphan(const OrphanRecord& r) {
  std::string v = kOrphanLayout.Encode(r);
  for (const Bytes16& h : r.holders) PutBytes16(&v, h);
  return v;
}

Result<OrphanRecord> DecodeOrphan(std::string_view v) {
  ARCHIL_RETURN_IF_ERROR(CheckFmt(kMetaCf, "ORPHAN", v));
  if (v.size() < kOrphanLayout.size()) {
    return BadLength("ORPHAN", v.size(), "24 + 16 * n_holders");
  }
  const size_t n = kOrphanLayout.CountIn(v);
  const size_t want = kOrphanLayout.size() + 16 * n;
  if (v.size() != want) return BadLength("ORPHAN", v.size(), std::to_string(want));
  OrphanRecord r;
  ARCHIL_RETURN_IF_ERROR(kOrphanLayout.Get("ORPHAN", v, &r));
  r.holders.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    r.holders.push_back(GetBytes16(v.data() + kOrphanLayout.size() + 16 * i));
  }
  return r;
}

// ---- PURGE ----

std::string EncodePurge(const PurgeRecord& r) { return kPurgeLayout.Encode(r); }

Result<PurgeRecord> DecodePurge(std::string_view v) {
  return kPurgeLayout.DecodeExact(kMetaCf, "PURGE", v);
}

// ---- SEG ----

std::string EncodeSeg(const SegRecord& r) { return kSegLayout.Encode(r); }

Result<SegRecord> DecodeSeg(std::string_view v) {
  return kSegLayout.DecodeExact(kMetaCf, "SEG", v);
}

// ---- RELOC / RELOC_REV ----

std::string EncodeReloc(const RelocRecord& r) { return kRelocLayout.Encode(r); }

Result<RelocRecord> DecodeReloc(std::string_view v) {
  return kRelocLayout.DecodeExact(kMetaCf, "RELOC", v);
}

// ---- LOCAL ----

std::string EncodeLocal(const LocalRecord& r) { return kLocalLayout.Encode(r); }

Result<LocalRecord> DecodeLocal(std::string_view v) {
  return kLocalLayout.DecodeExact(kMetaCf, "LOCAL", v);
}

}  // namespace archil::engine
