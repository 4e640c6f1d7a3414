// The tier's manifests (docs/formats.md §8.1, §8.4, §8.5): small JSON documents in the object
// envelope (magic "ARCHOBJ\0", kind, fmt, body length, body, CRC-32C, "AEND").
//
//  - A snapshot manifest, disks/<dsk-id>/snap/<name>/SNAPSHOT (kind 2), written after the parts
//    it lists: a snapshot without one is incomplete and never read.
//  - A disk manifest, disks/<dsk-id>/MANIFEST (kind 1), replaced only by compare-and-swap on its
//    etag: which snapshots are published (newest first, the two that are retained).
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "engine/types.h"

namespace archil::tier {

enum class EnvelopeKind : uint16_t {
  kDiskManifest = 1,
  kSnapshotManifest = 2,
  kCatalogPointer = 3,
  kOwner = 4
};

// REQUIRES: body is valid UTF-8.
std::string EncodeEnvelope(EnvelopeKind kind, std::string_view body);
// Strict: magic, kind == `kind`, fmt 1, reserved zero, length, CRC, end magic. Returns the body.
Result<std::string> DecodeEnvelope(std::string_view v, EnvelopeKind kind);

struct SnapshotPartInfo {
  uint64_t size = 0;
  uint32_t crc32c = 0;
  uint32_t entries = 0;
  bool operator==(const SnapshotPartInfo&) const = default;
};

struct SnapshotManifest {
  engine::DiskNo disk;
  uint32_t owner_gen = 1;
  engine::Seq seq;                      // the disk's state after this record
  int64_t created_ns = 0;               // the writer's CLOCK_REALTIME, for people only
  std::vector<SnapshotPartInfo> parts;  // part i is SnapshotPartKey(disk, owner_gen, seq, i)
  // The disk's own segments that exist in the snapshot (its SEG records), ascending: the
  // collector keeps their objects while the snapshot is retained.
  std::vector<uint64_t> segments;
  bool operator==(const SnapshotManifest&) const = default;
};

std::string EncodeSnapshotManifest(const SnapshotManifest& m);
// Corruption if the envelope or the JSON is not what EncodeSnapshotManifest writes.
Result<SnapshotManifest> DecodeSnapshotManifest(std::string_view v);
std::string SnapshotManifestKey(engine::DiskNo disk, uint32_t owner_gen, engine::Seq seq);

struct PublishedSnapshot {
  uint32_t owner_gen = 1;
  engine::Seq seq;
  bool operator==(const PublishedSnapshot&) const = default;
};

// The seqs of a disk's log that one owner generation wrote (docs/tiering.md §5): its log
// objects are read from first_seq to last_seq; 0: the range is open (the current owner's).
struct OwnerRange {
  uint32_t gen = 1;
  engine::Seq first_seq{1};
  engine::Seq last_seq{0};
  bool operator==(const OwnerRange&) const = default;
};

struct DiskManifest {
  engine::DiskNo disk;
  // Newest first, at most kRetainedSnapshots: recovery starts from the first; the collector keeps
  // every object either one needs (docs/tiering.md §4).
  std::vector<PublishedSnapshot> snapshots;
  // Ascending generations, each range starting after the one before it ends, the last one open.
  // Empty: every object is generation 1's (a bucket no server ever took over).
  std::vector<OwnerRange> owners;
  // The disk was deleted: recovery skips it, and the collector deletes its objects.
  bool deleting = false;
  bool operator==(const DiskManifest&) const = default;
};
inline constexpr size_t kRetainedSnapshots = 2;

// Whether a log object of generation `gen` holding seqs [first, last] is one a reader uses, and
// the last seq of it that it may take (records past a closed range are a fenced owner's).
// nullopt: none of it.
std::optional<engine::Seq> UsableThrough(const DiskManifest& m, uint32_t gen, engine::Seq first,
                                         engine::Seq last);
// The generation that owns the disk's log now: the open range's (1 without ranges).
uint32_t CurrentOwner(const DiskManifest& m);
// `m` handed to generation `gen` from seq `from` on: the open range closes at from - 1 and a new
// open one begins. REQUIRES: gen > CurrentOwner(m).
DiskManifest HandOver(DiskManifest m, uint32_t gen, engine::Seq from);

// A snapshot's name, SnapshotName(owner_gen, seq) ("<gen:08x>-<seq:016x>"), read back; nullopt
// for any other text.
std::optional<PublishedSnapshot> ParseSnapshotName(std::string_view name);

std::string EncodeDiskManifest(const DiskManifest& m);
Result<DiskManifest> DecodeDiskManifest(std::string_view v);
std::string DiskManifestKey(engine::DiskNo disk);

}  // namespace archil::tier
