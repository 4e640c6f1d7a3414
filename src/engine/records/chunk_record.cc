#include "engine/records/chunk_record.h"

#include "engine/records/record_util.h"

namespace archil::engine {

namespace {

void PutExtent(std::string* v, const Extent& e) {
  PutFixed16LE(v, e.blk_off);
  PutFixed16LE(v, e.nblk);
  PutFixed32LE(v, e.seg_blk);
  PutFixed64LE(v, e.seg_disk.value());
  PutFixed64LE(v, e.seg_no.value());
  PutFixed64LE(v, e.birth.value());
  PutFixed16LE(v, e.flags);
  PutZeros(v, 2);
  for (uint32_t crc : e.crcs) PutFixed32LE(v, crc);
}

// Reads one extent at the front of `*in` and advances it.
Status GetExtent(std::string_view record, std::string_view* in, Extent* e) {
  if (in->size() < kExtentHeaderSize) {
    return BadLength(record, in->size(), "an extent of at least 36 bytes");
  }
  const std::string_view v = *in;
  e->blk_off = U16(v, 0);
  e->nblk = U16(v, 2);
  e->seg_blk = U32(v, 4);
  e->seg_disk = DiskNo(U64(v, 8));
  e->seg_no = SegNo(U64(v, 16));
  e->birth = Epoch(U64(v, 24));
  e->flags = U16(v, 32);
  if (e->nblk < 1 || e->nblk > kChunkBlocks) {
    return Status::Corruption(std::string(record) + ": extent nblk " + std::to_string(e->nblk));
  }
  const size_t size = kExtentHeaderSize + 4 * size_t{e->nblk};
  if (v.size() < size) return BadLength(record, v.size(), std::to_string(size) + " for an extent");
  e->crcs.resize(e->nblk);
  for (size_t i = 0; i < e->nblk; ++i) e->crcs[i] = U32(v, kExtentHeaderSize + 4 * i);
  in->remove_prefix(size);
  return CheckExtent(*e);
}

}  // namespace

Status CheckExtent(const Extent& e) {
  if (e.nblk < 1 || e.nblk > kChunkBlocks || e.end() > kChunkBlocks) {
    return Status::Corruption("extent [" + std::to_string(e.blk_off) + ", +" +
                              std::to_string(e.nblk) + ") leaves the chunk");
  }
  if (e.seg_blk < 1 || uint64_t{e.seg_blk} + e.nblk - 1 > UINT32_MAX) {
    return Status::Corruption("extent seg_blk " + std::to_string(e.seg_blk) + " out of range");
  }
  if (e.crcs.size() != e.nblk) {
    return Status::Corruption("extent has " + std::to_string(e.crcs.size()) + " CRCs for " +
                              std::to_string(e.nblk) + " blocks");
  }
  return Status::Ok();
}

Status CheckChunk(const ChunkRecord& c) {
  uint32_t prev_end = 0;
  for (const Extent& e : c.extents) {
    ARCHIL_RETURN_IF_ERROR(CheckExtent(e));
    if (e.blk_off < prev_end) {
      return Status::Corruption("chunk extents unsorted or overlapping at block " +
                                std::to_string(e.blk_off));
    }
    prev_end = e.end();
  }
  return Status::Ok();
}

std::string EncodeChunk(const Envelope& env, const ChunkRecord& c) {
  std::string v;
  PutEnvelope(&v, env);
  if (env.kind == ValueKind::kWhiteout) return v;
  PutFixed32LE(&v, c.tgen);
  PutFixed16LE(&v, static_cast<uint16_t>(c.extents.size()));
  PutZeros(&v, 2);
  for (const Extent& e : c.extents) PutExtent(&v, e);
  return v;
}

Result<Versioned<ChunkRecord>> DecodeChunk(std::string_view v) {
  std::string_view body;
  ARCHIL_ASSIGN_OR_RETURN(Envelope env, DecodeEnvelope("chunk", v, &body));
  Versioned<ChunkRecord> out{env, {}};
  if (env.kind == ValueKind::kWhiteout) return out;
  if (body.size() < 8) return BadLength("chunk", v.size(), "at least 20");
  out.body.tgen = U32(body, 0);
  const uint16_t n = U16(body, 4);
  if (n > kChunkBlocks) return Status::Corruption("chunk: n_ext " + std::to_string(n));
  body.remove_prefix(8);
  out.body.extents.resize(n);
  for (Extent& e : out.body.extents) ARCHIL_RETURN_IF_ERROR(GetExtent("chunk", &body, &e));
  if (!body.empty()) return BadLength("chunk", v.size(), "no bytes after the last extent");
  ARCHIL_RETURN_IF_ERROR(CheckChunk(out.body));
  return out;
}

std::string EncodeChunkOp(const ChunkOp& op) {
  std::string v(1, static_cast<char>(op.op));
  PutZeros(&v, 3);
  PutFixed64LE(&v, op.birth.value());
  PutFixed32LE(&v, op.tgen);
  switch (op.op) {
    case ChunkOpType::kWrite:
      PutExtent(&v, op.extent);
      break;
    case ChunkOpType::kClip:
      PutFixed16LE(&v, op.keep_blk);
      PutZeros(&v, 2);
      break;
    case ChunkOpType::kPunch:
      PutFixed16LE(&v, op.punch_off);
      PutFixed16LE(&v, op.punch_nblk);
      break;
  }
  return v;
}

Result<ChunkOp> DecodeChunkOp(std::string_view v) {
  if (v.size() < 16) return BadLength("ChunkMerge operand", v.size(), "at least 16");
  ChunkOp op;
  const uint8_t type = U8(v, 0);
  op.birth = Epoch(U64(v, 4));
  op.tgen = U32(v, 12);
  std::string_view rest = v.substr(16);
  switch (type) {
    case static_cast<uint8_t>(ChunkOpType::kWrite):
      op.op = ChunkOpType::kWrite;
      ARCHIL_RETURN_IF_ERROR(GetExtent("ChunkMerge WRITE", &rest, &op.extent));
      if (!rest.empty()) return BadLength("ChunkMerge WRITE", v.size(), "16 + one extent");
      return op;
    case static_cast<uint8_t>(ChunkOpType::kClip):
      op.op = ChunkOpType::kClip;
      if (rest.size() != 4) return BadLength("ChunkMerge CLIP", v.size(), "20");
      op.keep_blk = U16(rest, 0);
      if (op.keep_blk > kChunkBlocks) {
        return Status::Corruption("ChunkMerge CLIP: keep_blk " + std::to_string(op.keep_blk));
      }
      return op;
    case static_cast<uint8_t>(ChunkOpType::kPunch):
      op.op = ChunkOpType::kPunch;
      if (rest.size() != 4) return BadLength("ChunkMerge PUNCH", v.size(), "20");
      op.punch_off = U16(rest, 0);
      op.punch_nblk = U16(rest, 2);
      if (op.punch_nblk < 1 || uint32_t{op.punch_off} + op.punch_nblk > kChunkBlocks) {
        return Status::Corruption("ChunkMerge PUNCH: range [" + std::to_string(op.punch_off) +
                                  ", +" + std::to_string(op.punch_nblk) + ") leaves the chunk");
      }
      return op;
  }
  return Status::Corruption("ChunkMerge operand: unknown op " + std::to_string(type));
}

}  // namespace archil::engine
