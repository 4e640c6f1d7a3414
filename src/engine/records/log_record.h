// Log records (docs/formats.md §8.3): the key mutations one commit made to one disk, as the
// `outbox` CF holds them and log objects carry them. Physical logging: replaying a disk's records
// in seq order onto its state before the first one gives its state after the last, key for key.
//
// Layout (little-endian): fmt u8 = 1, flags u8, n_segrefs u16, n_mutations u32, seq u64,
// epoch u64, commit time i64 (ns), n_segrefs × (seg_disk u64, seg_no u64), then, with flag
// kLogFlagDepends only, n_depends u16 and n_depends × (disk u64, seq u64), then n_mutations ×
// (op u8, cf tag u8, key_len u16, val_len u32, key, value).
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"
#include "engine/records/column_families.h"
#include "engine/types.h"

namespace archil::engine {

enum class LogOp : uint8_t { kPut = 1, kDelete = 2, kMerge = 3 };

struct LogMutation {
  LogOp op = LogOp::kPut;
  Cf cf = Cf::kMeta;  // only a logged CF (LoggedCf)
  std::string key;
  std::string value;  // empty for kDelete
  bool operator==(const LogMutation&) const = default;
};

inline constexpr uint8_t kLogFlagEpochBump = 1 << 0;
inline constexpr uint8_t kLogFlagDepends = 1
                                           << 2;  // set by the encoder iff depends_on is not empty

struct LogRecord {
  uint8_t flags = 0;
  Seq seq;
  Epoch epoch;  // the disk's epoch at commit
  int64_t commit_ns = 0;
  // Every segment a block this record makes live lies in: the record ships only once each one is
  // in the bucket (docs/tiering.md §2).
  std::vector<std::pair<DiskNo, SegNo>> segrefs;
  // Other disks' logs this record needs in the store first, each up to a seq: a branch's first
  // record needs its parent's log up to the fork (docs/tiering.md §2, dependencies).
  std::vector<std::pair<DiskNo, Seq>> depends_on;
  std::vector<LogMutation> mutations;
  bool operator==(const LogRecord&) const = default;
};

// Whether mutations of `cf` are logged: meta (except its LOCAL records), inode, dentry, xattr,
// chunk, hist, dead, segusage. Not default, intent, outbox, session.
bool LoggedCf(Cf cf);
// Whether a mutation of `key` in `cf` is logged (LoggedCf, and not meta's LOCAL).
bool LoggedKey(Cf cf, std::string_view key);

// REQUIRES: every key at most 65535 bytes, every value less than 4 GiB, at most 65535 segrefs
// and 65535 dependencies; r.flags without kLogFlagDepends (the encoder sets it).
std::string EncodeLogRecord(const LogRecord& r);
// Strict: fmt, lengths, known ops, logged CFs, keys of one disk (`disk`), nothing left over.
// Corruption naming what is wrong otherwise.
Result<LogRecord> DecodeLogRecord(std::string_view v, DiskNo disk);

}  // namespace archil::engine
