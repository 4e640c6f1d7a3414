// Builders and parsers for every key of the engine's RocksDB column families (docs/formats.md
// §3, §4). Keys are big-endian so that bytewise order is numeric order; every key except the
// `default` CF's starts with the 8-byte disk number. Integers inside key payloads (hist
// suffixes, the dead CF's DATA payload) are big-endian too: they are key bytes.
//
// Builders: REQUIRES valid arguments (names per IsValidFileName / IsValidXattrName); they do not
// check. Parsers take bytes read back from RocksDB and return Corruption for a wrong length,
// prefix byte or name, naming the CF.
//
// Thread-safety: pure functions.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"
#include "engine/types.h"

namespace archil::engine {

using SessionIdBytes = std::array<uint8_t, 16>;

// ---- Whole disks -------------------------------------------------------------------------------

// The 8-byte prefix of every key of `disk` (all CFs but `default`).
std::string DiskPrefix(DiskNo disk);
// [begin, end) covering every key of `disk`, for DeleteRange: begin = DiskPrefix(disk), end =
// DiskPrefix(disk + 1). For the largest disk number (all ones) no 8-byte end exists; `end` is
// then empty, meaning "to the end of the CF". REQUIRES: disk.value() != 0.
struct KeyRange {
  std::string begin;
  std::string end;  // empty: unbounded
};
KeyRange DiskRange(DiskNo disk);
// Reads the disk number of any non-default key. Corruption if shorter than 8 bytes.
Result<DiskNo> DiskOfKey(std::string_view key);

// ---- default CF
// ----------------------------------------------------------------------------------

enum class DefaultRecordType : uint8_t {
  kSchema = 0x01,
  kServer = 0x02,
  kBoot = 0x03,
  kOwner = 0x04,
  kDeleted = 0x05
};
// type byte + "schema" / "server" / "boot" / "owner" / "deleted".
std::string DefaultKey(DefaultRecordType type);
// A deleted disk whose objects the tier still has to collect: "\x05deleted" + disk u64 BE; the
// value is its lineage root, u64 LE.
std::string DeletedDiskKey(DiskNo disk);

// ---- meta CF: disk | rtype | rest
// ------------------------------------------------------------------

enum class MetaType : uint8_t {
  kDisk = 0x01,
  kCounters = 0x02,
  kEpoch = 0x03,
  kCkpt = 0x04,
  kBranch = 0x05,
  kOrigin = 0x06,
  kOrphan = 0x07,
  kPurge = 0x08,
  kSeg = 0x09,
  kReloc = 0x0A,
  kRelocRev = 0x0B,
  kLocal = 0x0C,
};

// DISK, COUNTERS, LOCAL (nothing after rtype).
std::string MetaKey(DiskNo disk, MetaType type);
std::string MetaEpochKey(DiskNo disk, Epoch epoch);
// REQUIRES: name is 1..100 bytes (the control plane checks the character set).
std::string MetaCkptKey(DiskNo disk, std::string_view name);
// `root` = the lineage root (branch names are unique within a lineage).
std::string MetaBranchKey(DiskNo root, std::string_view name);
// REQUIRES: type is kOrigin, kOrphan or kPurge.
std::string MetaInoKey(DiskNo disk, MetaType type, Ino ino);
std::string MetaSegKey(DiskNo disk, SegNo seg);
// REQUIRES: type is kReloc (old seg, old blk) or kRelocRev (new seg, new blk).
std::string MetaRelocKey(DiskNo disk, MetaType type, SegNo seg, uint32_t blk);

struct MetaKeyParts {
  DiskNo disk;
  MetaType type = MetaType::kDisk;
  uint64_t id = 0;        // EPOCH: epoch; ORIGIN/ORPHAN/PURGE: ino; SEG/RELOC*: seg_no
  uint32_t blk = 0;       // RELOC/RELOC_REV
  std::string_view name;  // CKPT/BRANCH (a view into the key)
};
Result<MetaKeyParts> ParseMetaKey(std::string_view key);

// ---- inode CF: inode, truncate record, link back-reference
// ---------------------------------------

// An inode number as keys and level keys hold it: 8 bytes, big-endian.
std::string Ino8(Ino ino);
std::string InodeKey(DiskNo disk, Ino ino);                    // 16 bytes
std::string TruncateKey(DiskNo disk, Ino ino, uint32_t tgen);  // disk|ino|0x01|tgen, 21
std::string BackrefKey(DiskNo disk, Ino ino, Ino parent);      // disk|ino|0x02|parent, 25
// Every key of one inode in the inode CF (inode, truncate records, back-references):
// [disk|ino, disk|ino+1). For the largest ino, `end` is DiskRange(disk).end.
KeyRange InodeKeyRange(DiskNo disk, Ino ino);

enum class InodeKeyKind : uint8_t { kInode = 0, kTruncate = 0x01, kBackref = 0x02 };
struct InodeKeyParts {
  DiskNo disk;
  Ino ino;
  InodeKeyKind kind = InodeKeyKind::kInode;
  uint32_t tgen = 0;  // kTruncate
  Ino parent;         // kBackref
};
Result<InodeKeyParts> ParseInodeKey(std::string_view key);

// ---- dentry CF: disk | parent | cookie | name
// -----------------------------------------------------

std::string DentryKey(DiskNo disk, Ino parent, uint64_t cookie, std::string_view name);
// disk | parent (16 bytes): the prefix of every entry of the directory.
std::string DentryPrefix(DiskNo disk, Ino parent);
// disk | parent | cookie: where readdir(off) resumes is DentrySeekKey(..., off + 1).
std::string DentrySeekKey(DiskNo disk, Ino parent, uint64_t cookie);
struct DentryKeyParts {
  DiskNo disk;
  Ino parent;
  uint64_t cookie = 0;
  std::string_view name;
};
Result<DentryKeyParts> ParseDentryKey(std::string_view key);

// ---- xattr CF: disk | ino | name
// ------------------------------------------------------------------

std::string XattrKey(DiskNo disk, Ino ino, std::string_view name);
std::string XattrPrefix(DiskNo disk, Ino ino);
struct XattrKeyParts {
  DiskNo disk;
  Ino ino;
  std::string_view name;
};
Result<XattrKeyParts> ParseXattrKey(std::string_view key);

// ---- chunk CF: disk | ino | chunk index
// ------------------------------------------------------------

std::string ChunkKey(DiskNo disk, Ino ino, uint64_t chunk);
std::string ChunkPrefix(DiskNo disk, Ino ino);
struct ChunkKeyParts {
  DiskNo disk;
  Ino ino;
  uint64_t chunk = 0;
};
Result<ChunkKeyParts> ParseChunkKey(std::string_view key);

// ---- intent CF: disk | seg_no | seg_blk
// -------------------------------------------------------------

std::string IntentKey(DiskNo disk, SegNo seg, uint32_t seg_blk);
struct IntentKeyParts {
  DiskNo disk;
  SegNo seg;
  uint32_t seg_blk = 0;
};
Result<IntentKeyParts> ParseIntentKey(std::string_view key);

// ---- hist CF: disk | tag | suffix | death_epoch
// --------------------------------------------------

enum class HistTag : uint8_t {
  kInode = 2,     // suffix ino(8)
  kDentry = 3,    // parent(8) cookie(8) name NUL
  kXattr = 4,     // ino(8) name NUL
  kChunk = 5,     // ino(8) chunk(8)
  kTruncate = 6,  // ino(8) tgen(4)
  kBackref = 7,   // ino(8) parent(8)
};

// The hist suffix naming head key `head_key` (a key of the CF `tag` names: for kTruncate and
// kBackref the inode-CF key of that kind). Corruption if head_key does not parse as such.
Result<std::string> HistSuffixOf(HistTag tag, std::string_view head_key);
// The head key of `disk` that a suffix names (inverse of HistSuffixOf). Corruption if the suffix is
// malformed for the tag.
Result<std::string> HeadKeyOf(DiskNo disk, HistTag tag, std::string_view suffix);
// REQUIRES: suffix well formed for tag (e.g. from HistSuffixOf).
std::string HistKey(DiskNo disk, HistTag tag, std::string_view suffix, Epoch death);
// disk | tag | suffix: the common prefix of every version of one key.
std::string HistVersionsPrefix(DiskNo disk, HistTag tag, std::string_view suffix);
struct HistKeyParts {
  DiskNo disk;
  HistTag tag = HistTag::kInode;
  std::string_view suffix;  // view into the key
  Epoch death;
};
Result<HistKeyParts> ParseHistKey(std::string_view key);
// Corruption unless `suffix` is well formed for `tag`.
Status CheckHistSuffix(HistTag tag, std::string_view suffix);

// ---- dead CF: disk | death | birth | kind | payload
// -----------------------------------------------

enum class DeadKind : uint8_t { kData = 1, kHist = 2, kHead = 3 };
struct DeadBlocks {
  DiskNo seg_disk;
  SegNo seg_no;
  uint32_t seg_blk = 0;
  uint32_t nblk = 0;
  bool operator==(const DeadBlocks&) const = default;
};
std::string DeadDataKey(DiskNo disk, Epoch death, Epoch birth, const DeadBlocks& blocks);
// REQUIRES: kind is kHist or kHead; suffix well formed for tag.
std::string DeadItemKey(DiskNo disk, Epoch death, Epoch birth, DeadKind kind, HistTag tag,
                        std::string_view suffix);
// disk | death | birth: GC seeks here (§5.5); DeadSeekKey(disk, d, Epoch(0)) is the prefix of d.
std::string DeadSeekKey(DiskNo disk, Epoch death, Epoch birth);
struct DeadKeyParts {
  DiskNo disk;
  Epoch death;
  Epoch birth;
  DeadKind kind = DeadKind::kData;
  DeadBlocks blocks;              // kData
  HistTag tag = HistTag::kInode;  // kHist, kHead
  std::string_view suffix;        // kHist, kHead
};
Result<DeadKeyParts> ParseDeadKey(std::string_view key);

// ---- segusage CF, outbox CF
// -----------------------------------------------------------------------

std::string SegUsageKey(DiskNo disk, SegNo seg);
Result<std::pair<DiskNo, SegNo>> ParseSegUsageKey(std::string_view key);
std::string OutboxKey(DiskNo disk, Seq seq);
Result<std::pair<DiskNo, Seq>> ParseOutboxKey(std::string_view key);

// ---- session CF: disk | rtype | rest
// ---------------------------------------------------------------

enum class SessionRecordType : uint8_t {
  kSession = 0x01,
  kSlot = 0x02,
  kDelegation = 0x03,
  kRevocation = 0x04,
  kInoGrant = 0x05,
};
std::string SessionKey(DiskNo disk, const SessionIdBytes& session);
std::string SlotKey(DiskNo disk, const SessionIdBytes& session, uint32_t slot);
std::string InoGrantKey(DiskNo disk, const SessionIdBytes& session);
// REQUIRES: type is kDelegation or kRevocation.
std::string DelegationKey(DiskNo disk, SessionRecordType type, uint64_t deleg_gen);
struct SessionKeyParts {
  DiskNo disk;
  SessionRecordType type = SessionRecordType::kSession;
  SessionIdBytes session{};  // kSession, kSlot, kInoGrant
  uint32_t slot = 0;         // kSlot
  uint64_t deleg_gen = 0;    // kDelegation, kRevocation
};
Result<SessionKeyParts> ParseSessionKey(std::string_view key);

}  // namespace archil::engine
