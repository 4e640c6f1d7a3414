#include "engine/space/segment_format.h"

#include "base/crc32c.h"
#include "engine/records/record_util.h"

namespace archil::engine {

namespace {

constexpr std::string_view kHeaderMagic("ARCHSEG\0", 8);
constexpr std::string_view kFooterMagic("ARCHSFT\0", 8);
constexpr std::string_view kTailMagic("ARCHSEND", 8);

// Magic, then fmt (u16 at offset 8, or `fmt_off`), then CRC of [0, crc_off) stored at crc_off.
Status CheckFramed(std::string_view what, std::string_view v, std::string_view magic,
                   size_t fmt_off, size_t crc_off) {
  if (v.substr(0, 8) != magic) return Status::Corruption(std::string(what) + ": bad magic");
  const uint16_t fmt = U16(v, fmt_off);
  if (fmt != kSegmentFmt) {
    return Status::Corruption("segment fmt " + std::to_string(fmt) + " unsupported");
  }
  if (Crc32c(v.data(), crc_off) != U32(v, crc_off)) {
    return Status::Corruption(std::string(what) + ": CRC mismatch");
  }
  return Status::Ok();
}

void PutCrcOfAll(std::string* v) { PutFixed32LE(v, Crc32c(*v)); }

}  // namespace

// ---- header ----

std::string EncodeSegmentHeader(const SegmentHeader& h) {
  std::string v(kHeaderMagic);
  PutFixed16LE(&v, kSegmentFmt);
  PutFixed16LE(&v, h.flags);
  PutFixed32LE(&v, kBlockSize);
  PutFixed64LE(&v, h.seg_disk.value());
  PutFixed64LE(&v, h.seg_no.value());
  PutFixed64LE(&v, h.root.value());
  PutFixed32LE(&v, h.owner_gen);
  PutFixed32LE(&v, h.max_blocks);
  PutI64(&v, h.created);
  PutBytes16(&v, h.server_id);
  PutZeros(&v, kSegmentHeaderSize - 4 - v.size());
  PutCrcOfAll(&v);
  return v;
}

Result<SegmentHeader> DecodeSegmentHeader(std::string_view block) {
  std::string_view v = block;
  if (v.size() != kSegmentHeaderSize) {
    return BadLength("segment header", v.size(), std::to_string(kSegmentHeaderSize));
  }
  ARCHIL_RETURN_IF_ERROR(CheckFramed("segment header", v, kHeaderMagic, 8, 4092));
  if (U32(v, 12) != kBlockSize) {
    return Status::Corruption("segment header: block size " + std::to_string(U32(v, 12)));
  }
  SegmentHeader h;
  h.flags = U16(v, 10);
  h.seg_disk = DiskNo(U64(v, 16));
  h.seg_no = SegNo(U64(v, 24));
  h.root = DiskNo(U64(v, 32));
  h.owner_gen = U32(v, 40);
  h.max_blocks = U32(v, 44);
  h.created = I64(v, 48);
  h.server_id = GetBytes16(v.data() + 56);
  return h;
}

// ---- footer ----

std::string EncodeSegmentFooter(const SegmentFooter& f) {
  std::string v(kFooterMagic);
  PutFixed16LE(&v, kSegmentFmt);
  PutFixed16LE(&v, f.flags);
  PutFixed32LE(&v, static_cast<uint32_t>(f.records.size()));
  PutFixed32LE(&v, f.data_end_blk);
  PutZeros(&v, 4);
  PutFixed64LE(&v, f.seg_disk.value());
  PutFixed64LE(&v, f.seg_no.value());
  PutI64(&v, f.sealed);
  PutFixed32LE(&v, static_cast<uint32_t>(kSegmentRecordSize * f.records.size()));
  PutFixed32LE(&v, static_cast<uint32_t>(4 * f.block_crcs.size()));
  PutZeros(&v, 4);
  PutCrcOfAll(&v);
  for (const SegmentRecord& r : f.records) {
    PutFixed32LE(&v, r.seg_blk);
    PutFixed32LE(&v, r.nblk);
    PutFixed64LE(&v, r.ino.value());
    PutFixed64LE(&v, r.file_off);
    PutFixed32LE(&v, r.flags);
    PutZeros(&v, 4);
  }
  for (uint32_t crc : f.block_crcs) PutFixed32LE(&v, crc);
  return v;
}

Result<SegmentFooter> DecodeSegmentFooter(std::string_view footer) {
  std::string_view v = footer;
  if (v.size() < kSegmentFooterFixedSize) {
    return BadLength("segment footer", v.size(), "at least 64");
  }
  ARCHIL_RETURN_IF_ERROR(CheckFramed("segment footer", v, kFooterMagic, 8, 60));
  SegmentFooter f;
  f.flags = U16(v, 10);
  const uint32_t n = U32(v, 12);
  f.data_end_blk = U32(v, 16);
  f.seg_disk = DiskNo(U64(v, 24));
  f.seg_no = SegNo(U64(v, 32));
  f.sealed = I64(v, 40);
  const uint32_t records_len = U32(v, 48);
  const uint32_t blocktab_len = U32(v, 52);
  if (f.data_end_blk < 1) return Status::Corruption("segment footer: data_end_blk 0");
  if (uint64_t{records_len} != kSegmentRecordSize * uint64_t{n} ||
      uint64_t{blocktab_len} != 4 * (uint64_t{f.data_end_blk} - 1) ||
      v.size() != kSegmentFooterFixedSize + uint64_t{records_len} + blocktab_len) {
    return BadLength("segment footer", v.size(),
                     "64 + 32 * n_records + 4 * (data_end_blk - 1), matching records_len and "
                     "blocktab_len");
  }
  f.records.resize(n);
  size_t off = kSegmentFooterFixedSize;
  for (SegmentRecord& r : f.records) {
    r.seg_blk = U32(v, off);
    r.nblk = U32(v, off + 4);
    r.ino = Ino(U64(v, off + 8));
    r.file_off = U64(v, off + 16);
    r.flags = U32(v, off + 24);
    if (r.seg_blk < 1 || r.nblk < 1 || uint64_t{r.seg_blk} + r.nblk > f.data_end_blk) {
      return Status::Corruption("segment footer: record [" + std::to_string(r.seg_blk) + ", +" +
                                std::to_string(r.nblk) + ") outside the data area");
    }
    off += kSegmentRecordSize;
  }
  f.block_crcs.resize(f.data_end_blk - 1);
  for (uint32_t& crc : f.block_crcs) {
    crc = U32(v, off);
    off += 4;
  }
  return f;
}

// ---- tail ----

SegmentTail TailFor(uint64_t footer_off, std::string_view footer) {
  return SegmentTail{footer_off, static_cast<uint32_t>(footer.size()), Crc32c(footer)};
}

std::string EncodeSegmentTail(const SegmentTail& t) {
  std::string v(kTailMagic);
  PutFixed64LE(&v, t.footer_off);
  PutFixed32LE(&v, t.footer_len);
  PutFixed32LE(&v, t.footer_crc);
  PutFixed16LE(&v, kSegmentFmt);
  PutZeros(&v, 2);
  PutCrcOfAll(&v);
  return v;
}

Result<SegmentTail> DecodeSegmentTail(std::string_view tail) {
  std::string_view v = tail;
  if (v.size() != kSegmentTailSize) {
    return BadLength("segment tail", v.size(), std::to_string(kSegmentTailSize));
  }
  ARCHIL_RETURN_IF_ERROR(CheckFramed("segment tail", v, kTailMagic, 24, 28));
  SegmentTail t{U64(v, 8), U32(v, 16), U32(v, 20)};
  if (t.footer_off % kBlockSize != 0 || t.footer_off < kBlockSize ||
      t.footer_len < kSegmentFooterFixedSize) {
    return Status::Corruption("segment tail: footer at " + std::to_string(t.footer_off) + ", " +
                              std::to_string(t.footer_len) + " bytes");
  }
  return t;
}

}  // namespace archil::engine
