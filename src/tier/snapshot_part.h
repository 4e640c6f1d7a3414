// Snapshot parts (docs/formats.md §8.4): a disk's logged keys at one seq, as the snapshotter
// stores them under disks/<dsk-id>/snap/<owner_gen:08x>-<seq:016x>/part-<index:06x>, each at most
// a few MiB, in column-family then key order across the parts of one snapshot.
//
// Layout (little-endian): magic "ARCHSNP\0", fmt u16 = 1, rsv u16, index u32, disk u64, seq u64,
// n_entries u32, CRC-32C of bytes [0, 36) u32; then n_entries × (cf tag u8, key_len u16,
// val_len u32, key, value); then total length u32, CRC-32C of every byte before it u32, magic
// "ARCHSEND". The CF tag is engine::Cf's value, as in log records (formats.md §8.3).
//
// Thread-safety: pure functions; a SnapshotPartWriter is used by one thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "engine/records/column_families.h"
#include "engine/types.h"

namespace archil::tier {

struct SnapshotEntry {
  engine::Cf cf = engine::Cf::kMeta;
  std::string key;
  std::string value;
  bool operator==(const SnapshotEntry&) const = default;
};

struct SnapshotPart {
  engine::DiskNo disk;
  engine::Seq seq;  // the disk's last seq in the snapshot: its state after that record
  uint32_t index = 0;
  std::vector<SnapshotEntry> entries;
  bool operator==(const SnapshotPart&) const = default;
};

// Builds one part entry by entry, so that a snapshot never holds more than one part in memory.
class SnapshotPartWriter {
 public:
  SnapshotPartWriter(engine::DiskNo disk, engine::Seq seq, uint32_t index);
  // REQUIRES: engine::LoggedKey(cf, key), the key of `disk`, key at most 65535 bytes, value less
  // than 4 GiB, keys in (cf, key) order across calls.
  void Add(engine::Cf cf, std::string_view key, std::string_view value);
  size_t size() const { return buf_.size(); }
  uint32_t entries() const { return n_; }
  // The encoded part; the writer is spent.
  std::string Finish();

 private:
  std::string buf_;
  uint32_t n_ = 0;
};

std::string EncodeSnapshotPart(const SnapshotPart& p);
// Strict: both magics, both CRCs, the lengths, fmt, every entry a logged key (engine::LoggedKey)
// of the part's disk, entries in strictly increasing (cf, key) order, nothing left over.
// Corruption naming what is wrong otherwise.
Result<SnapshotPart> DecodeSnapshotPart(std::string_view v);

// "disks/<dsk-id>/snap/<owner_gen:08x>-<seq:016x>/" (a snapshot's prefix), and a part's key in it.
std::string SnapshotPrefix(engine::DiskNo disk, uint32_t owner_gen, engine::Seq seq);
std::string SnapshotPartKey(engine::DiskNo disk, uint32_t owner_gen, engine::Seq seq,
                            uint32_t index);
// "<owner_gen:08x>-<seq:016x>", the name a disk manifest gives a snapshot.
std::string SnapshotName(uint32_t owner_gen, engine::Seq seq);

}  // namespace archil::tier
