// The self-describing parts of a segment file (formats.md §6.1): the header in block 0, the
// footer after the data area of a sealed segment, and the 32-byte tail at the end of the file.
// All little-endian; each carries a magic, a u16 fmt and a CRC32C.
//
// File layout: header (block 0) | data blocks 1..F-1 | footer at F * 4096 | tail. The tail
// immediately follows the footer, so file_len = F * 4096 + footer_len + 32.
//
// Decoders: Corruption for a wrong magic, length or CRC, and "segment fmt N unsupported" for an
// unknown fmt (the fmt is checked after the magic and before the CRC, so a newer format is named
// as such rather than as damage).
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

inline constexpr uint16_t kSegmentFmt = 1;
inline constexpr size_t kSegmentHeaderSize = 4096;
inline constexpr size_t kSegmentFooterFixedSize = 64;
inline constexpr size_t kSegmentRecordSize = 32;
inline constexpr size_t kSegmentTailSize = 32;
inline constexpr uint16_t kSegmentFlagRepackOutput = 1 << 0;       // header
inline constexpr uint16_t kSegmentFlagRecordsIncomplete = 1 << 0;  // footer

struct SegmentHeader {
  uint16_t flags = 0;
  DiskNo seg_disk;
  SegNo seg_no;
  DiskNo root;
  uint32_t owner_gen = 0;
  uint32_t max_blocks = 0;  // data capacity in blocks (16384 = 64 MiB)
  int64_t created = 0;
  std::array<uint8_t, 16> server_id{};
  bool operator==(const SegmentHeader&) const = default;
};
// The whole 4096-byte block 0.
std::string EncodeSegmentHeader(const SegmentHeader& h);
Result<SegmentHeader> DecodeSegmentHeader(std::string_view block);

// One footer record: what a run of data blocks holds.
inline constexpr uint32_t kSegmentRecordRepackCopy = 1 << 0;
inline constexpr uint32_t kSegmentRecordRmw = 1 << 1;
struct SegmentRecord {
  uint32_t seg_blk = 0;
  uint32_t nblk = 0;
  Ino ino;
  uint64_t file_off = 0;
  uint32_t flags = 0;
  bool operator==(const SegmentRecord&) const = default;
};

struct SegmentFooter {
  uint16_t flags = 0;
  uint32_t data_end_blk = 1;  // F: first block after the data area (>= 1)
  DiskNo seg_disk;
  SegNo seg_no;
  int64_t sealed = 0;
  std::vector<SegmentRecord> records;  // each within blocks [1, F)
  std::vector<uint32_t> block_crcs;    // CRC32C of data blocks 1..F-1: F - 1 entries
  bool operator==(const SegmentFooter&) const = default;
};
// REQUIRES: block_crcs.size() == data_end_blk - 1.
std::string EncodeSegmentFooter(const SegmentFooter& f);
// `footer` is exactly the footer's bytes (footer_len of the tail). Checks the fixed part's CRC,
// that records_len and blocktab_len agree with n_records, F and the length, and that every record
// lies within the data area. The whole footer's CRC is the tail's (DecodeSegmentTail).
Result<SegmentFooter> DecodeSegmentFooter(std::string_view footer);

struct SegmentTail {
  uint64_t footer_off = 0;
  uint32_t footer_len = 0;
  uint32_t footer_crc = 0;  // CRC32C of the whole footer
  bool operator==(const SegmentTail&) const = default;
};
// The tail describing `footer` written at `footer_off`.
SegmentTail TailFor(uint64_t footer_off, std::string_view footer);
std::string EncodeSegmentTail(const SegmentTail& t);
Result<SegmentTail> DecodeSegmentTail(std::string_view tail);

}  // namespace archil::engine
