#include "engine/records/chunk_record.h"

#include "engine/records/field_codec.h"
#include "engine/records/record_util.h"

namespace archil::engine {

namespace {

// The layouts of formats.md §4.5, one line per field.
// clang-format off

// An extent: this header, then nblk CRCs of 4 bytes.
constexpr auto kExtentLayout = Layout<Extent>(
    Field(&Extent::blk_off),
    Field(&Extent::nblk),
    Field(&Extent::seg_blk),
    Field(&Extent::seg_disk),
    Field(&Extent::seg_no),
    Field(&Extent::birth),
    Field(&Extent::flags),
    Reserved(2));
static_assert(kExtentLayout.size() == kExtentHeaderSize);

// A chunk's body after the envelope: this header, then n_ext extents.
constexpr auto kChunkHeaderLayout = Layout<ChunkRecord>(
    Field(&ChunkRecord::tgen),
    Count16(&ChunkRecord::extents),
    Reserved(2));

// A ChunkMerge operand: this header, then by op one extent (WRITE), CLIP's or PUNCH's fields.
constexpr auto kChunkOpHeaderLayout = Layout<ChunkOp>(
    UncheckedEnum(&ChunkOp::op),
    Reserved(3),
    Field(&ChunkOp::birth),
    Field(&ChunkOp::tgen));

constexpr auto kChunkClipLayout = Layout<ChunkOp>(
    Field(&ChunkOp::keep_blk),
    Reserved(2));

constexpr auto kChunkPunchLayout = Layout<ChunkOp>(
    Field(&ChunkOp::punch_off),
    Field(&ChunkOp::punch_nblk));
// clang-format on

void PutExtent(std::string* v, const Extent& e) {
  kExtentLayout.Put(v, e);
  for (uint32_t crc : e.crcs) PutFixed32LE(v, crc);
}

// Reads one extent at the front of `*in` and advances it.
Status GetExtent(std::string_view record, std::string_view* in, Extent* e) {
  if (in->size() < kExtentHeaderSize) {
    return BadLength(record, in->size(), "an extent of at least 36 bytes");
  }
  const std::string_view v = *in;
  ARCHIL_RETURN_IF_ERROR(kExtentLayout.Get(record, v, e));
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
  kChunkHeaderLayout.Put(&v, c);
  for (const Extent& e : c.extents) PutExtent(&v, e);
  return v;
}

Result<Versioned<ChunkRecord>> DecodeChunk(std::string_view v) {
  std::string_view body;
  ARCHIL_ASSIGN_OR_RETURN(Envelope env, DecodeEnvelope("chunk", v, &body));
  Versioned<ChunkRecord> out{env, {}};
  if (env.kind == ValueKind::kWhiteout) return out;
  if (body.size() < kChunkHeaderLayout.size()) return BadLength("chunk", v.size(), "at least 20");
  ARCHIL_RETURN_IF_ERROR(kChunkHeaderLayout.Get("chunk", body, &out.body));
  const size_t n = kChunkHeaderLayout.CountIn(body);
  if (n > kChunkBlocks) return Status::Corruption("chunk: n_ext " + std::to_string(n));
  body.remove_prefix(kChunkHeaderLayout.size());
  out.body.extents.resize(n);
  for (Extent& e : out.body.extents) ARCHIL_RETURN_IF_ERROR(GetExtent("chunk", &body, &e));
  if (!body.empty()) return BadLength("chunk", v.size(), "no bytes after the last extent");
  ARCHIL_RETURN_IF_ERROR(CheckChunk(out.body));
  return out;
}

std::string EncodeChunkOp(const ChunkOp& op) {
  std::string v = kChunkOpHeaderLayout.Encode(op);
  switch (op.op) {
    case ChunkOpType::kWrite:
      PutExtent(&v, op.extent);
      break;
    case ChunkOpType::kClip:
      kChunkClipLayout.Put(&v, op);
      break;
    case ChunkOpType::kPunch:
      kChunkPunchLayout.Put(&v, op);
      break;
  }
  return v;
}

Result<ChunkOp> DecodeChunkOp(std::string_view v) {
  if (v.size() < kChunkOpHeaderLayout.size()) {
    return BadLength("ChunkMerge operand", v.size(), "at least 16");
  }
  ChunkOp op;
  ARCHIL_RETURN_IF_ERROR(kChunkOpHeaderLayout.Get("ChunkMerge operand", v, &op));
  std::string_view rest = v.substr(kChunkOpHeaderLayout.size());
  switch (op.op) {
    case ChunkOpType::kWrite:
      ARCHIL_RETURN_IF_ERROR(GetExtent("ChunkMerge WRITE", &rest, &op.extent));
      if (!rest.empty()) return BadLength("ChunkMerge WRITE", v.size(), "16 + one extent");
      return op;
    case ChunkOpType::kClip:
      if (rest.size() != kChunkClipLayout.size()) {
        return BadLength("ChunkMerge CLIP", v.size(), "20");
      }
      ARCHIL_RETURN_IF_ERROR(kChunkClipLayout.Get("ChunkMerge CLIP", rest, &op));
      if (op.keep_blk > kChunkBlocks) {
        return Status::Corruption("ChunkMerge CLIP: keep_blk " + std::to_string(op.keep_blk));
      }
      return op;
    case ChunkOpType::kPunch:
      if (rest.size() != kChunkPunchLayout.size()) {
        return BadLength("ChunkMerge PUNCH", v.size(), "20");
      }
      ARCHIL_RETURN_IF_ERROR(kChunkPunchLayout.Get("ChunkMerge PUNCH", rest, &op));
      if (op.punch_nblk < 1 || uint32_t{op.punch_off} + op.punch_nblk > kChunkBlocks) {
        return Status::Corruption("ChunkMerge PUNCH: range [" + std::to_string(op.punch_off) +
                                  ", +" + std::to_string(op.punch_nblk) + ") leaves the chunk");
      }
      return op;
  }
  return Status::Corruption("ChunkMerge operand: unknown op " +
                            std::to_string(static_cast<unsigned>(op.op)));
}

}  // namespace archil::engine
