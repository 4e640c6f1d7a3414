// Values of the `meta` CF (formats.md §4.1): one struct per rtype, each with a strict codec.
// Meta values are not versioned (no envelope); each starts with fmt = 1. Reserved fields are
// written as zero and ignored on read.
//
// Decoders return Corruption for an unknown fmt ("meta fmt N unsupported"), a wrong length
// (naming the record) or an out-of-range enum value.
//
// Thread-safety: pure functions.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "engine/types.h"

namespace archil::engine {

using Bytes16 = std::array<uint8_t, 16>;

// ---- DISK (96 bytes) ----
enum class DiskState : uint8_t { kActive = 1, kHidden = 2, kDeleting = 3 };
inline constexpr uint16_t kDiskFlagXattrs = 1 << 0;
struct DiskRecord {
  DiskState state = DiskState::kActive;
  uint16_t flags = 0;
  uint32_t lineage_index = 0;  // 24 bits
  DiskNo root;
  DiskNo parent;
  Epoch fork_epoch;
  DiskNo read_parent;
  Epoch read_parent_epoch;
  uint16_t depth = 0;
  uint32_t owner_gen = 0;
  Epoch cur_epoch;
  int64_t created = 0;
  Bytes16 dir_hash_key{};
  uint32_t next_lineage_index = 0;
  bool operator==(const DiskRecord&) const = default;
};
inline constexpr size_t kDiskRecordSize = 96;
std::string EncodeDisk(const DiskRecord& r);
Result<DiskRecord> DecodeDisk(std::string_view v);

// ---- COUNTERS (40 bytes) ----
struct CountersRecord {
  Seq last_seq;
  uint64_t next_ino = 0;  // next inode counter (low 40 bits)
  uint32_t next_seg = 0;
  uint64_t head_blocks = 0;
  bool operator==(const CountersRecord&) const = default;
};
inline constexpr size_t kCountersRecordSize = 40;
std::string EncodeCounters(const CountersRecord& r);
Result<CountersRecord> DecodeCounters(std::string_view v);

// ---- EPOCH (16 + 2 + n bytes) ----
enum class EpochState : uint8_t { kCheckpoint = 1, kReleased = 2 };
inline constexpr uint16_t kEpochFlagGcDone = 1 << 0;
struct EpochRecord {
  EpochState state = EpochState::kCheckpoint;
  uint16_t flags = 0;
  uint32_t branch_pins = 0;
  int64_t frozen_at = 0;
  std::string checkpoint_name;  // REQUIRES (encode): <= 65535 bytes
  bool pinned() const { return state == EpochState::kCheckpoint || branch_pins > 0; }
  bool operator==(const EpochRecord&) const = default;
};
std::string EncodeEpoch(const EpochRecord& r);
Result<EpochRecord> DecodeEpoch(std::string_view v);

// ---- CKPT (48 bytes) ----
enum class CkptState : uint8_t { kPending = 1, kCommitted = 2 };
struct CkptRecord {
  CkptState state = CkptState::kPending;
  Epoch epoch;
  int64_t created = 0;
  int64_t committed = 0;
  Bytes16 request_id{};
  bool operator==(const CkptRecord&) const = default;
};
inline constexpr size_t kCkptRecordSize = 48;
std::string EncodeCkpt(const CkptRecord& r);
Result<CkptRecord> DecodeCkpt(std::string_view v);

// ---- BRANCH (40 + 2 + n + 2 + m bytes) ----
struct BranchRecord {
  DiskNo child;
  DiskNo parent;
  Epoch fork_epoch;
  int64_t created = 0;
  std::string from_checkpoint;
  // The create request's Idempotency-Key ("" if none): a retry with the same key finds this
  // record and gets the same branch.
  std::string idempotency_key;
  bool operator==(const BranchRecord&) const = default;
};
std::string EncodeBranch(const BranchRecord& r);
Result<BranchRecord> DecodeBranch(std::string_view v);

// ---- ORIGIN (24 bytes) ----
struct OriginRecord {
  DiskNo disk;
  Epoch epoch;
  bool operator==(const OriginRecord&) const = default;
};
inline constexpr size_t kOriginRecordSize = 24;
std::string EncodeOrigin(const OriginRecord& r);
Result<OriginRecord> DecodeOrigin(std::string_view v);

// ---- ORPHAN (24 + 16 * n bytes) ----
struct OrphanRecord {
  Epoch orphan_epoch;
  int64_t since = 0;
  std::vector<Bytes16> holders;  // session ids; REQUIRES (encode): <= 65535
  bool operator==(const OrphanRecord&) const = default;
};
std::string EncodeOrphan(const OrphanRecord& r);
Result<OrphanRecord> DecodeOrphan(std::string_view v);

// ---- PURGE (32 bytes) ----
enum class PurgeReason : uint8_t { kUnlinked = 1, kOrphanClosed = 2, kDiskDropped = 3 };
struct PurgeRecord {
  PurgeReason reason = PurgeReason::kUnlinked;
  Epoch death_epoch;
  uint64_t cursor = 0;  // next chunk index to process
  int64_t queued = 0;
  bool operator==(const PurgeRecord&) const = default;
};
inline constexpr size_t kPurgeRecordSize = 32;
std::string EncodePurge(const PurgeRecord& r);
Result<PurgeRecord> DecodePurge(std::string_view v);

// ---- SEG (72 bytes) ----
enum class SegState : uint8_t {
  kOpen = 1,
  kSealed = 2,
  kUploaded = 3,
  kRelocated = 4,
  kDead = 5,
};
inline constexpr uint16_t kSegFlagRepackOutput = 1 << 0;
inline constexpr uint16_t kSegFlagRecordsIncomplete = 1 << 1;
// UPLOADED as a link(2) to the segment file itself (dir:// on the same file system): the file is
// the stored copy, so it is never hole-punched (docs/tiering.md §1).
inline constexpr uint16_t kSegFlagStoredByLink = 1 << 2;
struct SegRecord {
  SegState state = SegState::kOpen;
  uint16_t flags = 0;
  uint32_t data_end_blk = 0;
  uint64_t file_len = 0;
  uint64_t footer_off = 0;
  uint32_t footer_len = 0;
  uint32_t footer_crc = 0;
  int64_t created = 0;
  int64_t sealed = 0;
  int64_t uploaded = 0;
  int64_t dead = 0;
  DiskNo root;
  bool operator==(const SegRecord&) const = default;
};
inline constexpr size_t kSegRecordSize = 72;
std::string EncodeSeg(const SegRecord& r);
Result<SegRecord> DecodeSeg(std::string_view v);

// ---- RELOC and RELOC_REV (24 bytes each): the other side of the relocation ----
struct RelocRecord {
  uint32_t nblk = 0;
  SegNo seg;         // RELOC: new seg_no; RELOC_REV: old seg_no
  uint32_t blk = 0;  // RELOC: new blk; RELOC_REV: old blk
  bool operator==(const RelocRecord&) const = default;
};
inline constexpr size_t kRelocRecordSize = 24;
std::string EncodeReloc(const RelocRecord& r);
Result<RelocRecord> DecodeReloc(std::string_view v);

// ---- LOCAL (40 bytes) ----
struct LocalRecord {
  uint16_t restarts = 0;
  uint32_t incarnation = 0;
  Seq uploaded_seq;
  Seq durable_seq;
  Seq snapshot_seq;
  bool operator==(const LocalRecord&) const = default;
};
inline constexpr size_t kLocalRecordSize = 40;
std::string EncodeLocal(const LocalRecord& r);
Result<LocalRecord> DecodeLocal(std::string_view v);
// The boot verifier: (owner_gen & 0xFFFF) << 16 | restarts.
constexpr uint32_t Incarnation(uint32_t owner_gen, uint16_t restarts) {
  return ((owner_gen & 0xFFFFu) << 16) | restarts;
}

}  // namespace archil::engine
