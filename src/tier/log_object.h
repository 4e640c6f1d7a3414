// Log objects (docs/formats.md §8.2): consecutive log records of one disk, as the log shipper
// stores them under disks/<dsk-id>/log/<owner_gen:08x>/<first_seq:016x>.
//
// Layout (little-endian): magic "ARCHLOG\0", fmt u16 = 1, rsv u16, owner_gen u32, disk u64,
// first_seq u64, last_seq u64, n_records u32, CRC-32C of bytes [0, 44) u32; then per record:
// len u32, CRC-32C of the record u32, the record (engine/records/log_record.h); then total length
// u32, CRC-32C of every byte before it u32, magic "ARCHLEND".
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "engine/types.h"

namespace archil::tier {

struct LogObject {
  uint32_t owner_gen = 1;
  engine::DiskNo disk;
  engine::Seq first_seq;
  std::vector<std::string> records;  // encoded; record i has seq first_seq + i
  engine::Seq last_seq() const { return engine::Seq(first_seq.value() + records.size() - 1); }
  bool operator==(const LogObject&) const = default;
};

// REQUIRES: at least one record.
std::string EncodeLogObject(const LogObject& o);
// Strict: both magics, both CRCs, every record's CRC, the lengths, n_records ==
// last_seq - first_seq + 1, and every record a valid record of the disk (DecodeLogRecord) whose
// seq is the next. Corruption naming what is wrong otherwise.
Result<LogObject> DecodeLogObject(std::string_view v);

// "disks/<dsk-id>/log/<owner_gen:08x>/<first_seq:016x>", and the prefix of a disk's log objects.
std::string LogObjectKey(engine::DiskNo disk, uint32_t owner_gen, engine::Seq first_seq);
std::string LogObjectPrefix(engine::DiskNo disk);
// The parts of a key LogObjectKey made; InvalidArgument for any other key.
struct LogObjectName {
  engine::DiskNo disk;
  uint32_t owner_gen = 0;
  engine::Seq first_seq;
};
Result<LogObjectName> ParseLogObjectKey(std::string_view key);

}  // namespace archil::tier
